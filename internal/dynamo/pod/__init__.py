"""DCD → pod template: the per-type defaults, the merge of user over default, and resources."""
