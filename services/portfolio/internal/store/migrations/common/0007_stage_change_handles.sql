-- actor_handle is the handle of the contributor a change's actor names, as
-- the request's session carried it when the change was made (a handle,
-- once claimed, never changes). The portfolio cannot read the ledger's
-- contributors (each service owns its schema), and asking the ledger for
-- every row of a history would be a call per row; the credential carries
-- the handle for free. NULL when the actor is no contributor (an
-- administrator, a token, a task, a split), and for the changes recorded
-- before this migration, whose handles the portfolio never saw.
ALTER TABLE stage_changes ADD COLUMN actor_handle TEXT;
