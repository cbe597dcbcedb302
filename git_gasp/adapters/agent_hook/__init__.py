"""The agent hook and its queue: `entry` (``git-gasp-hook``, it only queues),
`queue_files` (the queue's entries, lock and log), `agent_proc` (the agent process a
hook runs under), `drain` (``python -m git_gasp.adapters.agent_hook.drain``) and `held` (what
is queued where there is no state yet, redacted until ``init --branch``). Recording what
is queued is ``adapters/live.py``'s and ``adapters/agent_hook_queue.py``'s."""
