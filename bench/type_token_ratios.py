"""Type-token ratios (unique / total) of pretokens, supermerge candidates and greedy-split pieces,
per language: the quantities of the paper's Figures 2 and 9, here for any set of corpora.

    python bench/type_token_ratios.py [CORPUS.jsonl ...] [--vocab 8192] [--text-key text]

Default corpora: every `../shared/fixtures/corpora/*.jsonl` but code. For each corpus sqltok trains a
BoundlessBPE model with the greedy split (script-aware, in memory) and reads the ratios from its
report; for corpora whose script-aware pretokens differ from the plain GPT-4o pattern's (Chinese,
Japanese, Thai, ...) the plain pattern's pretoken ratio is given too, as the paper's dark blue bars.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import duckdb

import sqltok

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "corpora"


def plain_pretoken_ratio(con, path: str, text_key: str) -> float:
    unique, total = con.execute(
        "SELECT count(DISTINCT p), count(*) FROM (SELECT unnest(pretokenize(text, simple := true)) AS p "
        "FROM (" + sqltok.Source(path=path, text_key=text_key).query() + "))").fetchall()[0]
    return unique / max(1, total)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="*")
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--text-key", default="text")
    args = ap.parse_args()
    paths = args.corpora or sorted(str(p) for p in FIXTURES.glob("*.jsonl") if p.stem != "code")
    print(f"{'corpus':<10} {'MB':>6} {'pretokens':>10} {'(GPT-4o)':>9} {'candidates':>11} {'pieces':>8} "
          f"{'supermerges':>12}")
    for path in paths:
        con = duckdb.connect()
        sqltok.register(con)
        rep = sqltok.train_superword(con, sqltok.Source(path=path, text_key=args.text_key), args.vocab, "m",
                                     greedy_split=True)
        plain = plain_pretoken_ratio(con, path, args.text_key)
        differs = abs(plain - rep.pretoken_type_token_ratio) > 1e-9
        print(f"{Path(path).stem:<10} {rep.bytes / 1e6:>6.1f} {rep.pretoken_type_token_ratio:>10.4f} "
              f"{(f'{plain:.4f}' if differs else ''):>9} {rep.candidate_type_token_ratio:>11.4f} "
              f"{rep.piece_type_token_ratio:>8.4f} {rep.supermerges:>12}")
        con.close()


if __name__ == "__main__":
    main()
