-- Leases (mvcc.LeaseRecord): etcd's lease bucket, one row per lease a
-- session granted and has not revoked, with the TTL it was granted. A
-- lease's keys are not listed: each key's record carries its lease. What a
-- lease has left is not kept either (etcd keeps none but checkpoints): a
-- session loaded again gives every lease its whole TTL, as etcd's new
-- leader does. A reset starts a session row without leases; ending a
-- session deletes them with it.
CREATE TABLE leases (
    session INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id      INTEGER NOT NULL,
    ttl     INTEGER NOT NULL,
    PRIMARY KEY (session, id)
) WITHOUT ROWID;
