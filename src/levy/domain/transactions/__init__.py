"""The rules of transactions (sales and credits), plain Python: ``rules`` (request fields,
lifecycle, line plan, tax provided or calculated, what an update may change, list filters),
``records`` (the stored transaction and its filing view), ``collected`` (collected-tax lines),
``credits`` (what credits may reverse) and ``tax_only`` (attribution of tax-only transactions)."""
