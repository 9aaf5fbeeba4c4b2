"""What every generator shares: its inputs (`GenContext`), typed errors, names, object envelopes,
content hashes, and the table of fields accepted but not implemented."""
