"""Excel workbooks: the declared calculation rendered as live formulas, and read back."""
