package usecase

import "github.com/foundryhq/foundry/services/platform/fault"

// How a use case checks its command (AGENTS.md): the command carries what
// the request said, amounts as the request's numbers, and the use case
// checks all of it before it reads or writes anything, answering one
// fault.Validation that names every bad field.
//
// Who may send a command stays the handler's decision (platform/authz).
// A command the handler refuses to run for its caller (not the
// contributor's own session) or for its Idempotency-Key (malformed) carries
// that refusal in its Refused field, and the use case answers it only when
// the fields themselves are valid: a request with bad fields learns about
// those first, whoever sends it, as the API has always answered.

// Page is a list request's page as sent: Limit is nil when the request
// gave none (each list has its default).
type Page struct {
	Limit  *int32
	Offset int32
	// Cursor, on the lists that have one, is a page's Listed.Next.
	Cursor string
}

// Listed is a page of a list as a use case read it: its items, how many
// the list has in all, and the page's bounds with the defaults applied.
type Listed[T any] struct {
	Items                []T
	Total, Limit, Offset int
	// Next is the cursor of the following page, on the lists that have
	// one ("" on the last page).
	Next string
}

// listed reads a page through read and wraps it with its bounds.
func listed[T any](limit, offset int, read func(limit, offset int) ([]T, int, error)) (Listed[T], error) {
	items, total, err := read(limit, offset)
	if err != nil {
		return Listed[T]{}, err
	}
	return Listed[T]{Items: items, Total: total, Limit: limit, Offset: offset}, nil
}

// collect merges a command's checks into one fault.Validation, so a
// request learns every bad field at once; an error of another kind wins as
// it is.
func collect(errs ...error) error {
	var fields []fault.FieldError
	for _, err := range errs {
		if err == nil {
			continue
		}
		fe, ok := fault.As(err)
		if !ok || fe.Kind != fault.Invalid {
			return err
		}
		fields = append(fields, fe.Fields...)
	}
	if len(fields) == 0 {
		return nil
	}
	return fault.Validation(fields...)
}

// required refuses an empty field.
func required(field, value string) error {
	if value == "" {
		return fault.Validation(fault.Field(field, "is required"))
	}
	return nil
}
