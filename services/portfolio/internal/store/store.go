// Package store defines what the portfolio service keeps and the errors its
// storage reports. sqlstore implements it on Postgres and SQLite; storetest
// is the conformance suite both engines must pass.
package store

import (
	"context"
	"embed"
	"errors"
	"io/fs"

	"github.com/foundryhq/foundry/services/platform/migrate"
	"time"

	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

// Errors every implementation returns (wrapped or not).
var (
	ErrNotFound      = errors.New("not found")
	ErrAlreadyExists = errors.New("already exists")
	// ErrArchived is returned when a change targets an archived idea.
	ErrArchived = errors.New("idea is archived")
)

//go:embed migrations
var migrations embed.FS

// Migrations are the portfolio schema's migrations (see the platform migrate package).
func Migrations() fs.FS { return migrate.Embedded(migrations) }

// Filter selects a page of the ranked list. Archived ideas are never listed.
type Filter struct {
	// OnlyUnvalidated keeps ideas whose manifestation status is not validated.
	OnlyUnvalidated bool
	// ExcludeComplete keeps ideas not yet at stage complete.
	ExcludeComplete bool
	// Tags keeps ideas carrying every listed tag.
	Tags   []string
	Limit  int
	Offset int
}

// Totals are the portfolio totals over active ideas.
type Totals struct {
	Ideas          int
	Validated      int
	PotentialValue float64
	ActualValue    float64
}

// Question is an open question about an idea.
type Question struct {
	ID        string
	IdeaID    string
	Text      string
	Status    string
	CreatedAt time.Time
}

// TagCount is one entry of the tags catalog.
type TagCount struct {
	Tag   string
	Ideas int
}

// Snapshot is one persisted portfolio health reading.
type Snapshot struct {
	ID                                                          string
	TakenAt                                                     time.Time
	TotalIdeas, TooLarge, TooSmall, Overlap, Healthy, Suggested int
}

// Counts are row counts for the storage report.
type Counts struct {
	Ideas, Questions, IdeaTags, Snapshots int
}

// Store is the portfolio's storage. Ideas returned carry their tags.
type Store interface {
	// CreateIdea stores a new idea. ErrAlreadyExists when the id is taken.
	CreateIdea(ctx context.Context, i idea.Idea) error
	// GetIdea returns an idea, archived or not. ErrNotFound when absent.
	GetIdea(ctx context.Context, id string) (idea.Idea, error)
	// ListIdeas returns a page of active ideas by score (descending, then
	// id) and how many ideas match the filter in all.
	ListIdeas(ctx context.Context, f Filter) ([]idea.Idea, int, error)
	// Totals returns the portfolio totals without scanning the portfolio.
	Totals(ctx context.Context) (Totals, error)
	// UpdateIdea runs change on the idea under a lock and stores the result
	// in the same transaction: concurrent updates of one idea apply one
	// after the other, each seeing the previous one's result. An error from
	// change aborts and is returned as is. change may run more than once
	// (a retried transaction), so it must only modify the idea.
	// ErrNotFound when absent; ErrArchived for an archived idea.
	UpdateIdea(ctx context.Context, id string, change func(*idea.Idea) error) (idea.Idea, error)
	// AdvanceForTask records that task taskID of taskType completed at at and
	// lets advance move the idea, once per task id: a task id seen before changes
	// nothing and returns the idea as it is with moved false.
	AdvanceForTask(ctx context.Context, id, taskID, taskType string, at time.Time, advance func(*idea.Idea) bool) (i idea.Idea, moved bool, from idea.Stage, err error)
	// AddQuestion stores an open question. ErrNotFound when the idea is absent.
	AddQuestion(ctx context.Context, q Question) error
	// ListQuestions returns an idea's questions, oldest first. ErrNotFound
	// when the idea is absent.
	ListQuestions(ctx context.Context, ideaID string) ([]Question, error)
	// OpenQuestions returns the open questions' texts of every active idea
	// that has any, oldest first.
	OpenQuestions(ctx context.Context) (map[string][]string, error)
	// ActiveIdeas returns every active idea, by score (descending, then id).
	ActiveIdeas(ctx context.Context) ([]idea.Idea, error)
	// ChildCounts returns, per idea, how many ideas were split from it.
	ChildCounts(ctx context.Context) (map[string]int, error)
	// Tags is the tags catalog over active ideas, ordered by tag.
	Tags(ctx context.Context) ([]TagCount, error)
	// Split stores children of an active parent in one transaction.
	Split(ctx context.Context, parentID string, children []idea.Idea) error
	// Merge archives fold into keep (which gains fold's tags) in one
	// transaction and returns keep as stored.
	Merge(ctx context.Context, keepID, foldID string, now time.Time) (idea.Idea, error)
	// SaveSnapshot stores a health snapshot.
	SaveSnapshot(ctx context.Context, s Snapshot) error
	// Snapshots returns the snapshots taken at or after since, oldest first.
	Snapshots(ctx context.Context, since time.Time) ([]Snapshot, error)
	// Counts returns row counts.
	Counts(ctx context.Context) (Counts, error)
}
