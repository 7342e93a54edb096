-- The model store: every model is rows keyed by its name, so one DELETE per table removes it whole.
CREATE SCHEMA IF NOT EXISTS sqltok_store;

CREATE TABLE IF NOT EXISTS sqltok_store.models (
    model          VARCHAR NOT NULL,   -- the name SQL and Python refer to it by
    method         VARCHAR NOT NULL,   -- word | boundless | superbpe (the reference's names), or a
                                       -- family whose models are kept as files (see model_files)
    vocab_size     INTEGER NOT NULL,   -- tokens, special tokens not included
    script_aware   BOOLEAN NOT NULL,
    settings       VARCHAR NOT NULL,   -- the reference's settings line (JSON)
    super_settings VARCHAR,            -- two-phase models: the superwords settings line (JSON)
    source         VARCHAR,            -- what it was trained on
    documents      BIGINT,             -- documents used (NULL and empty ones not counted)
    null_documents BIGINT,
    empty_documents BIGINT,
    bytes          BIGINT,             -- UTF-8 bytes of the documents used
    created        TIMESTAMP DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS sqltok_store.tokens (
    model    VARCHAR NOT NULL,
    id       INTEGER NOT NULL,
    token    BLOB NOT NULL,
    count    BIGINT NOT NULL,          -- final frequency in the training units
    is_super BOOLEAN NOT NULL
);

CREATE TABLE IF NOT EXISTS sqltok_store.merges (
    model    VARCHAR NOT NULL,
    is_super BOOLEAN NOT NULL,         -- false: phase-1 (regular) merge; true: supermerge
    idx      INTEGER NOT NULL,         -- position in its phase's merge list
    left_id  INTEGER NOT NULL,
    right_id INTEGER NOT NULL,
    new_id   INTEGER NOT NULL,         -- the token the merge yields (an existing one for a duplicate)
    count    BIGINT NOT NULL,          -- pair count when the merge was chosen
    flag     TINYINT NOT NULL          -- 1: it turned some unit into a single token
);

CREATE TABLE IF NOT EXISTS sqltok_store.special_tokens (
    model VARCHAR NOT NULL,
    id    INTEGER NOT NULL,
    token VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS sqltok_store.pretoken_counts (
    model    VARCHAR NOT NULL,
    pretoken VARCHAR NOT NULL,
    n        BIGINT NOT NULL
);

-- Two-phase models: the supermerge candidates of the corpus (runs of pretokens the phase-1 model
-- made single tokens) as ids of the phase-1 vocabulary they were extracted with, which phase1_tokens
-- holds (BoundlessBPE keeps only its first merges, so the model's own tokens may lack some). Stores
-- written before kept the pretokens' text instead; `store_migration` converts them.
CREATE TABLE IF NOT EXISTS sqltok_store.candidate_counts (
    model     VARCHAR NOT NULL,
    candidate INTEGER[] NOT NULL,
    n         BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS sqltok_store.phase1_tokens (
    model VARCHAR NOT NULL,
    id    INTEGER NOT NULL,
    token BLOB NOT NULL
);

-- Two-phase models: the phase-1 vocabulary size their candidates were extracted with.
ALTER TABLE sqltok_store.models ADD COLUMN IF NOT EXISTS phase1_vocab_size INTEGER;

-- Models of the families that are not byte-level BPE (Unigram, WordPiece, ...) are kept whole as the
-- file their family's library reads (kind: a kind of `sqltok.formats.kind.KINDS`), beside their row
-- in `models`; their tokens are not in `tokens`/`merges`.
CREATE TABLE IF NOT EXISTS sqltok_store.model_files (
    model   VARCHAR NOT NULL,
    kind    VARCHAR NOT NULL,
    content BLOB NOT NULL
);
