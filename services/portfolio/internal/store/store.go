// Package store defines what the portfolio service keeps, its repositories
// and the errors they report. Repositories work over a querier and never
// open a transaction: the use-case layer opens one per use case that
// writes, so an idea, its tags and the portfolio totals commit together.
// sqlstore implements them on Postgres and SQLite; storetest is the
// conformance suite both engines must pass.
package store

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"time"

	"github.com/foundryhq/foundry/services/platform/migrate"
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
	// OnlyAccepted keeps ideas whose values an operator accepted.
	OnlyAccepted bool
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

// StageChange is one change of an idea's stage.
type StageChange struct {
	ID     string
	IdeaID string
	// From is "" at the idea's creation (and for a migrated record).
	From, To idea.Stage
	At       time.Time
	// Actor is who changed it; Reason why: created, advance, operator,
	// update, task or migrated.
	Actor, Reason string
	// ActorHandle is Actor's handle when Actor is a contributor's id, as
	// the editor's session carried it; "" otherwise, and for the changes
	// recorded before the history kept handles.
	ActorHandle string
}

// Revision is one change of what steers an idea (idea.Steering): the
// values it had from At on, who set them and why.
type Revision struct {
	ID       string
	IdeaID   string
	Steering idea.Steering
	At       time.Time
	// Actor, ActorHandle and Reason are as in StageChange; Reason is
	// created, update, split, merge or migrated.
	Actor, ActorHandle, Reason string
}

// TaskEvent records that a task completed against an idea, and the stage
// move it caused (From equals To when it moved nothing).
type TaskEvent struct {
	TaskID   string
	IdeaID   string
	TaskType string
	From, To idea.Stage
	At       time.Time
}

// Ideas is the repository of ideas, their tags, the portfolio totals and
// the task events, over one querier. It never opens a transaction: every
// write keeps portfolio_totals in step within the caller's transaction, so
// the caller must write inside one (see the usecase package). Ideas
// returned carry their tags.
type Ideas interface {
	// Create stores a new idea and its tags and adds it to the totals.
	// ErrAlreadyExists when the id is taken.
	Create(ctx context.Context, i idea.Idea) error
	// Get returns an idea, archived or not. ErrNotFound when absent.
	Get(ctx context.Context, id string) (idea.Idea, error)
	// Lock returns an idea like Get and, on Postgres, locks its row until
	// the transaction ends (FOR UPDATE), so concurrent changes of one idea
	// apply one after the other. SQLite's write transactions are already
	// exclusive. ErrNotFound when absent.
	Lock(ctx context.Context, id string) (idea.Idea, error)
	// Update stores after over before, the same idea as read (locked) in
	// this transaction: its columns and score, its tags when they changed,
	// and the totals moved from before's contribution to after's.
	Update(ctx context.Context, before, after idea.Idea) error
	// List returns a page of active ideas by score (descending, then id),
	// how many ideas match the filter in all, and the portfolio's totals
	// (as Totals), read together.
	List(ctx context.Context, f Filter) ([]idea.Idea, int, Totals, error)
	// Totals returns the portfolio totals without scanning the portfolio.
	Totals(ctx context.Context) (Totals, error)
	// StageTotals returns the active ideas of each stage that has any,
	// without scanning the portfolio (counters every write keeps).
	StageTotals(ctx context.Context) (map[idea.Stage]int, error)
	// StagePages returns, for each stage that has active ideas, the ids of
	// a page of them (limit from offset) by score (descending, then id),
	// each page a range of an index, whatever the portfolio's size.
	StagePages(ctx context.Context, limit, offset int) (map[idea.Stage][]string, error)
	// Active returns every active idea, by score (descending, then id).
	Active(ctx context.Context) ([]idea.Idea, error)
	// ChildCounts returns, per idea, how many ideas were split from it.
	ChildCounts(ctx context.Context) (map[string]int, error)
	// Tags is the tags catalog over active ideas, ordered by tag.
	Tags(ctx context.Context) ([]TagCount, error)
	// RecordStage adds a change to the idea's stage history, with its
	// stint (see Stints) worked out from the idea's previous change.
	RecordStage(ctx context.Context, c StageChange) error
	// Stages returns a page of an idea's stage history, oldest first, and
	// how many changes the history has. ErrNotFound when the idea does not
	// exist.
	Stages(ctx context.Context, ideaID string, limit, offset int) ([]StageChange, int, error)
	// RecordRevision adds a revision to the idea's history of what steers
	// it.
	RecordRevision(ctx context.Context, r Revision) error
	// Revisions returns a page of an idea's revisions, oldest first, and
	// how many it has. ErrNotFound when the idea does not exist.
	Revisions(ctx context.Context, ideaID string, limit, offset int) ([]Revision, int, error)
	// Stints returns, for each stage of idea.Stages, the known times ideas
	// stayed in it (a change's stint: its at minus the at of the idea's
	// previous change) for the changes out of it at or after since,
	// shortest first. A stint is unknown, and left out, at an idea's
	// creation and after a "migrated" change. Stages without one are
	// absent.
	Stints(ctx context.Context, since time.Time) (map[idea.Stage][]time.Duration, error)
	// TaskSeen reports whether a task id has been recorded.
	TaskSeen(ctx context.Context, taskID string) (bool, error)
	// RecordTask records a task event. ErrAlreadyExists when the task id is
	// recorded already (a concurrent report of the same task).
	RecordTask(ctx context.Context, e TaskEvent) error
	// Counts returns the row counts of the portfolio schema.
	Counts(ctx context.Context) (Counts, error)
}

// Questions is the repository of open questions, over one querier.
type Questions interface {
	// Add stores an open question and counts it on its idea; the two writes
	// belong in one transaction. ErrNotFound when the idea is absent.
	Add(ctx context.Context, q Question) error
	// List returns an idea's questions, oldest first. ErrNotFound when the
	// idea is absent.
	List(ctx context.Context, ideaID string) ([]Question, error)
	// Open returns the open questions' texts of every active idea that has
	// any, oldest first.
	Open(ctx context.Context) (map[string][]string, error)
}

// Snapshots is the repository of health snapshots, over one querier.
type Snapshots interface {
	// Save stores a health snapshot.
	Save(ctx context.Context, s Snapshot) error
	// Since returns the snapshots taken at or after since, oldest first.
	Since(ctx context.Context, since time.Time) ([]Snapshot, error)
	// Prune deletes at most batch of the snapshots taken before before,
	// oldest first, and reports how many.
	Prune(ctx context.Context, before time.Time, batch int) (int64, error)
}
