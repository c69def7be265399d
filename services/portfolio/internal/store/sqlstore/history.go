package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// history is one of an idea's histories (its stage changes, its
// revisions): a table of rows with an id, the idea's id and a time, read a
// page at a time, oldest first, through an (idea_id, at, id) index.
type history struct {
	// what names the history in errors ("the stages").
	what string
	// query reads a page; built once by newHistory.
	query string
}

// newHistory returns the history kept in table, whose rows are read as
// id, at and then cols (column names of table, comma-separated).
//
// A page is one round trip: the idea's row (so an unknown idea is
// ErrNotFound, not an empty page), the history's count and the page,
// LEFT JOINed so that an empty page still answers the idea and its count.
func newHistory(what, table, cols string) history {
	names := strings.Split(cols, ",")
	outer := make([]string, len(names))
	for k, n := range names {
		outer[k] = "c." + strings.TrimSpace(n)
	}
	return history{what: what, query: `SELECT t.n, c.id, c.at, ` + strings.Join(outer, ", ") + `
		FROM ideas i
		CROSS JOIN (SELECT COUNT(*) AS n FROM ` + table + ` WHERE idea_id = $1) t
		LEFT JOIN (SELECT id, at, ` + cols + ` FROM ` + table + `
			WHERE idea_id = $1 ORDER BY at, id LIMIT $2 OFFSET $3) c ON TRUE
		WHERE i.id = $1
		ORDER BY c.at, c.id`}
}

// page reads a page of ideaID's history and how many rows it has. For
// each row, next returns where to scan the history's cols (pointers that
// take NULL: the LEFT JOIN answers NULLs for an empty page) and a build
// that makes the item from them, given the row's id and time; build is
// called only for a row of the page.
func page[T any](ctx context.Context, q database.Querier, h history, ideaID string, limit, offset int,
	next func() (dest []any, build func(id string, at time.Time) T)) ([]T, int, error) {
	rows, err := q.Query(ctx, h.query, ideaID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s of %s: %w", h.what, ideaID, err)
	}
	defer rows.Close()
	out := []T{}
	found, total := false, 0
	for rows.Next() {
		var (
			id *string
			at *int64
		)
		dest, build := next()
		if err := rows.Scan(append([]any{&total, &id, &at}, dest...)...); err != nil {
			return nil, 0, fmt.Errorf("read %s of %s: %w", h.what, ideaID, err)
		}
		found = true
		if id == nil {
			continue // an empty page
		}
		out = append(out, build(*id, database.Time(*at)))
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read %s of %s: %w", h.what, ideaID, err)
	}
	if !found {
		return nil, 0, fmt.Errorf("idea %s: %w", ideaID, store.ErrNotFound)
	}
	return out, total, nil
}

// text is a nullable column's text, "" for NULL.
func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
