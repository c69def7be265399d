package sqlstore

import (
	"context"
	"fmt"

	"github.com/foundryhq/foundry/services/platform/database"
)

// inChunk is how many ids one IN list holds: 500 parameters a statement
// stays well under every engine's limit (SQLite's is 32 766).
const inChunk = 500

// queryIn runs a query over ids in statements of inChunk ids each: query
// makes the statement from its IN list's placeholders, and scan reads each
// row it returns. An error of either is wrapped with what, as "read
// accounts: …".
func queryIn(ctx context.Context, q database.Querier, what string, ids []string,
	query func(placeholders string) string, scan func(rows database.Rows) error) error {
	for from := 0; from < len(ids); from += inChunk {
		part := ids[from:min(from+inChunk, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := q.Query(ctx, query(database.Placeholders(1, len(part))), args...)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		for rows.Next() {
			if err := scan(rows); err != nil {
				rows.Close()
				return fmt.Errorf("%s: %w", what, err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}
