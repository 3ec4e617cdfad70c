"""What each scheme reports (``analysis.figures``) and the export formats it adds (``analysis.exports``),
one module per scheme, registered when ``analysis.apps`` imports them."""
