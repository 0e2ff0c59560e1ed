"""The offline reader: panels, reading order, text regions, OCR grouping, speakers, overlays and evaluation."""
