-- What a class achieved (package server/classroom), kept beside the
-- session's data so that it outlives the session's time in memory: a
-- session is unloaded when idle, and the server restarts. A reset of the
-- session's store keeps it (ResetSession moves it to the new row); ending
-- the session deletes it with everything else.
--
-- class_progress: the lesson steps each person passed, as the lesson
-- engine's verify found them (principal is api.Principal.ID: a student's id,
-- or "teacher").
CREATE TABLE class_progress (
    session   INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    principal TEXT    NOT NULL,
    lesson    TEXT    NOT NULL,
    step      INTEGER NOT NULL,
    passed_at TEXT    NOT NULL,
    PRIMARY KEY (session, principal, lesson, step)
) WITHOUT ROWID;

-- class_findings: each misconception (or good practice) the lesson
-- engine's detectors found in a person's exchanges, and the lesson they were
-- in then ('' outside a lesson). exchange names the exchange that showed it
-- uniquely across the session's loads (the record of exchanges is in memory
-- and starts again at each load), so that a finding seen twice is counted
-- once.
CREATE TABLE class_findings (
    session   INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    detector  TEXT    NOT NULL,
    exchange  TEXT    NOT NULL,
    principal TEXT    NOT NULL,
    lesson    TEXT    NOT NULL,
    found_at  TEXT    NOT NULL,
    PRIMARY KEY (session, detector, exchange)
) WITHOUT ROWID;
