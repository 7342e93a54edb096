"""Pre-tokenization: the linear-time matchers of the GPT-4o, cl100k, GPT-2, Llama 3 and Qwen 2
patterns, and the reference's script-run splitting."""
