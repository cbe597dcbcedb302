"""Outside text made safe to store: secrets redacted (`redactor`, its detectors in
`patterns`), summaries bounded. Pure text work; used by every layer that stores text
it did not write."""
