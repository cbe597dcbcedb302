"""Framework bridges onto the runtime's AgentSink: LangChain (`langchain`), the OpenAI
Agents SDK (`openai_agents`) and what they share (`common`). None imports a framework
at load."""
