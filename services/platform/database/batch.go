package database

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Batch is statements sent together: on Postgres in one round trip (a
// pipelined pgx batch), on SQLite one after the other (an embedded engine
// has no round trips to save). Each statement's result goes to its
// callback, in the order queued; the first error stops the batch. A use case
// whose reads do not depend on each other queues them all and sends them
// once, instead of paying a round trip per read.
type Batch struct {
	items []batchItem
	// final: the last trip of its transaction (Final).
	final bool
}

type batchItem struct {
	query string
	args  []any
	rows  func(Rows) error
	row   func(Row) error
	// exec, for a statement that returns no rows, gets the rows it affected.
	exec func(int64) error
}

// Query queues a query whose rows read gets (it need not close them).
func (b *Batch) Query(read func(Rows) error, query string, args ...any) {
	b.items = append(b.items, batchItem{query: query, args: args, rows: read})
}

// QueryRow queues a one-row query; scan gets the row, whose Scan returns
// ErrNoRows when there is none.
func (b *Batch) QueryRow(scan func(Row) error, query string, args ...any) {
	b.items = append(b.items, batchItem{query: query, args: args, row: scan})
}

// Exec queues a statement that returns no rows; done (when not nil) gets
// the number of rows it affected.
func (b *Batch) Exec(done func(affected int64) error, query string, args ...any) {
	if done == nil {
		done = func(int64) error { return nil }
	}
	b.items = append(b.items, batchItem{query: query, args: args, exec: done})
}

// Final marks b as the last trip of the transaction it is sent in. On
// Postgres the transaction's COMMIT is pipelined after its statements: one
// round trip fewer, and the row locks its statements take are released in
// that same trip instead of one round trip later. A write that updates a
// hot row (the task counters every task write moves) held that row's lock
// across the COMMIT's round trip, which bounded how many such writes the
// row could take per second whatever the machine's capacity.
//
// Nothing may run in the transaction after it: a statement or batch sent
// later fails with ErrTxEnded. And because the COMMIT has already run when
// the statements' results reach their callbacks, b must change nothing on a
// path its use case then refuses (write its statements so that a refused
// request's conditions make them affect no row): a callback's error fails
// the call, but cannot undo b. A failed statement is different: Postgres
// skips the COMMIT after it, and the transaction rolls back as always.
//
// A transaction begun with a context from HoldCommit sends its COMMIT at
// its end as usual (the idempotency runner's keyed transactions, which save
// the response after the use case's last batch); outside a transaction
// Final means nothing, and on SQLite, which has no round trips to save, the
// transaction commits at its end, refusing later statements alike.
func (b *Batch) Final() { b.final = true }

// Len is the number of statements queued.
func (b *Batch) Len() int { return len(b.items) }

// Each calls f with each queued statement and its arguments, in order: a
// test's recorder reads what a batch will run (dbtest.Recorder).
func (b *Batch) Each(f func(query string, args []any)) {
	for _, it := range b.items {
		f(it.query, it.args)
	}
}

// pgBatcher is what a pgx pool and a pgx transaction share for batches.
type pgBatcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

func pgSendBatch(ctx context.Context, r pgBatcher, b *Batch) error {
	if b.Len() == 0 {
		return nil
	}
	// Close reads every result, running the callbacks, and returns the
	// first error.
	return r.SendBatch(ctx, pgBatch(b)).Close()
}

// pgBatch is b as a pgx batch, each statement's callback wired.
func pgBatch(b *Batch) *pgx.Batch {
	pb := &pgx.Batch{}
	for _, it := range b.items {
		q := pb.Queue(it.query, it.args...)
		switch {
		case it.exec != nil:
			done := it.exec
			q.Exec(func(tag pgconn.CommandTag) error { return done(tag.RowsAffected()) })
		case it.rows != nil:
			read := it.rows
			q.Query(func(rows pgx.Rows) error { return read(rows) })
		default:
			scan := it.row
			q.QueryRow(func(row pgx.Row) error { return scan(pgRow{row}) })
		}
	}
	return pb
}

func sqlSendBatch(ctx context.Context, r sqlRunner, b *Batch) error {
	for i, it := range b.items {
		if it.exec != nil {
			n, err := sqlExec(ctx, r, it.query, it.args)
			if err != nil {
				return fmt.Errorf("batch statement %d: %w", i+1, err)
			}
			if err := it.exec(n); err != nil {
				return err
			}
			continue
		}
		if it.row != nil {
			if err := it.row(sqlRow{r.QueryRowContext(ctx, rebind(it.query), it.args...)}); err != nil {
				return err
			}
			continue
		}
		rows, err := sqlQuery(ctx, r, it.query, it.args)
		if err != nil {
			return fmt.Errorf("batch statement %d: %w", i+1, err)
		}
		err = it.rows(rows)
		if cerr := rows.Err(); err == nil {
			err = cerr
		}
		rows.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
