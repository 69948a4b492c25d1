-- Who may use a session (package server/classroom). A session without a row
-- here is open: everyone who knows its name may do everything in it (the
-- sessions named on the server's command line). A guarded session knows its
-- teacher by a token and its students by the tokens they got when they
-- joined with its join code. Tokens and join codes are stored as SHA-256
-- hashes only: the database never holds a credential.
--
-- ending marks a session whose deletion has begun: it is no longer listed or
-- served, and its records go in batches; a server that crashed midway
-- finishes the deletion at its next start.
CREATE TABLE session_access (
    session            INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    guarded            INTEGER NOT NULL DEFAULT 0,
    teacher_token_hash BLOB,
    join_code_hash     BLOB,
    last_used_at       TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    ending             INTEGER NOT NULL DEFAULT 0
);

-- The students of guarded sessions. id is stable and safe to show (it names
-- the student's own namespace); name is the display name given at join.
CREATE TABLE session_students (
    session    INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id         TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    token_hash BLOB    NOT NULL UNIQUE,
    joined_at  TEXT    NOT NULL,
    PRIMARY KEY (session, id)
) WITHOUT ROWID;
