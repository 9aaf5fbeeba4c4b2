"""The CRD conversion webhook: ConversionReview handling (`review.py`) and its HTTPS server (`server.py`).

Generic runtime: the converter is a parameter, so this package knows no kind of its own."""
