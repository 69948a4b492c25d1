-- The revision at which a student's own key was first created (package
-- engine/lesson/classnames): a lesson quotes the article's revision of a
-- key's first creation in a command (lesson 1's etcdctl get k1 --rev=6),
-- which becomes the student's own, and the lesson deletes and recreates
-- the key, after which the store alone no longer tells the first
-- creation. Kept here so that a session loaded again (unloaded when idle,
-- a restarted server) still knows it. A reset of the session's store drops
-- it, since its revisions start again (ResetSession does not move it to
-- the new row); ending the session deletes it with everything else.
CREATE TABLE class_first_created (
    session  INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    key      TEXT    NOT NULL,
    revision INTEGER NOT NULL,
    PRIMARY KEY (session, key)
) WITHOUT ROWID;
