-- Sessions: one independent MVCC store each (its own revision sequence),
-- with the compaction bookkeeping of mvcc.Meta. AUTOINCREMENT so that the id
-- of a deleted session is never handed to a new one: a Backend still holding
-- the old id then fails on the foreign key instead of writing into a stranger's
-- session.
CREATE TABLE sessions (
    id                        INTEGER PRIMARY KEY AUTOINCREMENT,
    name                      TEXT    NOT NULL UNIQUE,
    compact_revision          INTEGER NOT NULL DEFAULT -1,
    finished_compact_revision INTEGER NOT NULL DEFAULT -1,
    created_at                TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Records: revision -> key-value, as mvcc.Record. WITHOUT ROWID clusters the
-- rows by (session, main, sub), so loading a session at start-up and a
-- watcher's catch-up are sequential reads of one b-tree range, and a point
-- lookup by revision is one b-tree descent. value is NULL exactly when the
-- record's value was nil (always for tombstones), so an empty value survives
-- the round trip as empty rather than nil.
CREATE TABLE records (
    session         INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    main            INTEGER NOT NULL,
    sub             INTEGER NOT NULL,
    tombstone       INTEGER NOT NULL,
    key             BLOB    NOT NULL,
    create_revision INTEGER NOT NULL,
    mod_revision    INTEGER NOT NULL,
    version         INTEGER NOT NULL,
    value           BLOB,
    lease           INTEGER NOT NULL,
    PRIMARY KEY (session, main, sub)
) WITHOUT ROWID;
