"""OpenTelemetry: runs exported as OTLP/JSON traces (`exporter`), traces imported as runs
(`importer`), and the OTLP/JSON shape both share (`otlp`)."""
