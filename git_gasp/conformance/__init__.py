"""The seven conformance checks of GASP Part VI and their report."""
