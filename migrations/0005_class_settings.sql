-- A class's session settings (package server/classroom), as the teacher
-- last left them: a session's settings live in its memory, so a session
-- unloaded when idle, or a restarted server, would start again from the
-- server's flags. settings is the JSON of GET /rvplay/v1/settings, applied
-- as a merge patch when the session loads. A reset keeps it; ending the
-- session deletes it.
CREATE TABLE class_settings (
    session  INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    settings TEXT    NOT NULL
);
