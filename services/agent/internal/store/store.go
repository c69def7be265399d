// Package store defines what the agent service keeps and its repositories.
// Repositories work over a querier (the pool or the use case's transaction)
// and never open a transaction: the use-case layer opens one per use case,
// so a status change, its counters, its A/B outcome and its outbox row
// commit together. sqlstore implements them on Postgres and SQLite.
package store

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/abtest"
	"github.com/foundryhq/foundry/services/agent/internal/loop"
	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

//go:embed migrations
var migrations embed.FS

// Migrations are the agent schema's migrations (see the platform migrate package).
func Migrations() fs.FS { return migrate.Embedded(migrations) }

// Errors every implementation returns (wrapped or not).
var (
	ErrNotFound      = errors.New("not found")
	ErrAlreadyExists = errors.New("already exists")
	// ErrLoopTaskOpen is Insert's answer for a task of SourceLoop whose
	// idea already has an open task of SourceLoop (the schema allows one).
	ErrLoopTaskOpen = errors.New("the idea already has an open task the pipeline loop opened")
)

// Sources of a task: who opened it.
const (
	// SourceAPI is a task created through the API (POST /api/agent/tasks).
	SourceAPI = "api"
	// SourceLoop is a task the pipeline loop opened for its idea: at most
	// one per idea is open at a time.
	SourceLoop = "pipeline_loop"
)

// Task is a stored task. Empty strings and zero times are NULL columns;
// nil pointers are unset measurements.
type Task struct {
	ID        string
	Direction string
	Type      task.Type
	Status    task.Status
	Model     string
	Executor  string
	Tier      string
	Command   string
	// Context is the JSON object given on create.
	Context       string
	IdeaID        string
	PromptVariant string
	// Source is who opened the task (SourceAPI, SourceLoop; "" for tasks
	// stored before sources were recorded).
	Source string

	Output string
	// Artifact is a text or a URL the task produced beside its output.
	Artifact       string
	ProgressPct    float64
	CurrentStep    string
	DecisionPrompt string
	ErrorSummary   string
	ErrorCategory  string
	// PromptVersion is the version of the stored prompt PromptVariant
	// names (0: a label only, or the built-in template); Prompt is the
	// text rendered for the task, what its executor gets.
	PromptVersion int
	Prompt        string

	WorkerID string
	// ClaimedBy is the credential (authz.Principal.ID) that claimed the
	// task; "" while unclaimed.
	ClaimedBy      string
	LeaseSeconds   int
	LeaseExpiresAt time.Time
	// Attempts counts the task's claims; MaxAttempts is how many it gets
	// (its type's retry policy when it was created, one more for each
	// operator's retry of a task out of attempts; 0 on tasks from before
	// retries, which the configured default governs).
	Attempts    int
	MaxAttempts int
	// NextAttemptAt is when a failed task with attempts left goes back to
	// the queue; zero otherwise.
	NextAttemptAt time.Time
	// StatusReason says why a task is discarded or cancelled.
	StatusReason string

	ValueScore   *float64
	ResourceCost *float64
	// Duration is in seconds; nil until the task finishes.
	Duration *float64
	// TokensIn, TokensOut and CostUSD are the run's usage (as reported, or
	// CostUSD estimated from the price table); nil until reported.
	TokensIn, TokensOut *int64
	CostUSD             *float64

	CreatedAt   time.Time
	UpdatedAt   time.Time
	StartedAt   time.Time
	CompletedAt time.Time
}

// Filter selects a page of tasks, newest first.
type Filter struct {
	// Status, Type and IdeaID filter when not empty.
	Status task.Status
	Type   task.Type
	IdeaID string
	// Before, when set, keeps the tasks after it in the list's order
	// (older, or as old with a smaller id): a keyset page.
	Before *Key
	Limit  int
	Offset int
}

// Key is a task's place in the newest-first list: its creation time,
// then its id.
type Key struct {
	CreatedAt time.Time
	ID        string
}

// FewDurations is the condition of a durations read (Tasks.QueueDurations):
// Counted plus the durations the histogram counts on the days starting in
// [From, To) is the number the read is to be no more than.
type FewDurations struct {
	Counted  int64
	From, To time.Time
}

// Tasks is the task repository.
type Tasks interface {
	// Insert stores a new task; ErrAlreadyExists when the id is taken,
	// ErrLoopTaskOpen when t is the loop's and its idea already has an
	// open task of the loop's. Either way nothing is written and the
	// transaction can go on.
	Insert(ctx context.Context, t Task) error
	// QueueInsert queues Insert's statement into b, for a use case that
	// sends its derived writes in the same trip. A refusal by a unique
	// rule fails the batch (database.IsUniqueViolation) and everything
	// queued after it; Refused, run once the transaction rolled back, says
	// which rule.
	QueueInsert(b *database.Batch, t Task)
	// Refused is why a unique rule refused t's insert: ErrAlreadyExists
	// when its id is taken, ErrLoopTaskOpen when t is a loop task whose
	// idea has one open.
	Refused(ctx context.Context, t Task) error
	// Get returns a task; ErrNotFound when there is none.
	Get(ctx context.Context, id string) (Task, error)
	// Lock returns a task locked for the rest of the transaction (a row
	// lock on Postgres; SQLite's write transactions are exclusive).
	Lock(ctx context.Context, id string) (Task, error)
	// Save writes every mutable field of t.
	Save(ctx context.Context, t Task) error
	// QueueSave queues Save's statement into b; the batch fails with
	// ErrNotFound when no task has t's id.
	QueueSave(b *database.Batch, t Task)
	// List returns a page, newest first.
	List(ctx context.Context, f Filter) ([]Task, error)
	// Attention returns a page of the failed and needs_decision tasks,
	// newest first.
	Attention(ctx context.Context, limit, offset int) ([]Task, error)
	// NextPending locks and returns the oldest pending task of the types
	// (any type when empty), skipping tasks other transactions hold;
	// ErrNotFound when none is pending.
	NextPending(ctx context.Context, types []task.Type) (Task, error)
	// Reap returns every running task whose lease expired before now to
	// pending, or times it out when it had maxAttempts claims already, in
	// one statement; it returns the changed tasks as they now are.
	Reap(ctx context.Context, now time.Time, maxAttempts int, summary string) ([]Task, error)
	// QueueOldestPending queues the read of the longest-waiting pending
	// task's creation time into b: *at is set and *ok is true when one is
	// pending.
	QueueOldestPending(b *database.Batch, at *time.Time, ok *bool)
	// QueueLastFinished queues the read of the statuses of the n most
	// recently finished tasks, newest first, into b.
	QueueLastFinished(b *database.Batch, n int, out *[]task.Status)
	// QueueDurations queues the read of the durations (seconds) of at most
	// limit tasks finished at or after since, the most recently finished
	// first, into b; with only, the read answers none unless only's count
	// is at most limit (a report reads exact durations only when there are
	// few, and queues the read with its histogram's, which it cannot wait
	// for).
	QueueDurations(b *database.Batch, since time.Time, limit int, only *FewDurations, out *[]float64)
	// OpenIdeas reports which of the ideas have a pending, running or
	// needs_decision task, or a failed one waiting for its retry.
	OpenIdeas(ctx context.Context, ideaIDs []string) (map[string]bool, error)
	// PendingLoopTasks returns, for those of the ideas that have one, the
	// id of their pending task of SourceLoop: one no pass is running (the
	// loop's own runs are claimed), left by a pass a restart or a lost
	// lease ended, or by a worker that handed it back.
	// A failed one whose retry is due at now is as good as pending (the
	// reaper has not put it back yet).
	PendingLoopTasks(ctx context.Context, ideaIDs []string, now time.Time) (map[string]string, error)
	// Retry returns up to limit failed tasks whose next attempt is due at
	// now to pending (the soonest due when more are), in one statement
	// (safe on every replica at once); it returns them as they now are,
	// in no particular order. The last
	// attempt's diagnosis and output leave the task (QueueAddAttempt kept
	// them) and its claim is released.
	Retry(ctx context.Context, now time.Time, limit int) ([]Task, error)
	// QueueAddAttempt queues into b the record of an attempt that did not
	// complete; a second record of the same attempt is skipped.
	QueueAddAttempt(b *database.Batch, a Attempt)
	// Attempts returns the task's recorded attempts, first first.
	Attempts(ctx context.Context, taskID string) ([]Attempt, error)
	// StageOutputs returns the idea's completed tasks of SourceLoop,
	// oldest first, at most limit of them (the newest), each output cut
	// to its last maxOutput bytes.
	StageOutputs(ctx context.Context, ideaID string, limit, maxOutput, maxArtifact int) ([]StageOutput, error)
	// QueueStageOutput queues into b the keeping of what a completed task
	// of SourceLoop produced among its idea's stage outputs, and the
	// dropping of the idea's older ones past the newest keep: they outlive
	// the task, which retention prunes (DeleteFinished).
	QueueStageOutput(b *database.Batch, ideaID string, o StageOutput, keep int)
	// DeleteFinished deletes at most batch of the tasks that finished
	// before before (completed, timed out, discarded or cancelled; a
	// failed task waits for its retry), oldest first, and returns what it
	// deleted. A task changed by a concurrent transaction is deleted only
	// if it still qualifies.
	DeleteFinished(ctx context.Context, before time.Time, batch int) ([]Pruned, error)
	// QueueDeleteAttempts queues into b the deletion of the tasks'
	// recorded attempts.
	QueueDeleteAttempts(b *database.Batch, taskIDs []string)
}

// Pruned is a task DeleteFinished deleted: what the task counts it
// leaves must lose.
type Pruned struct {
	ID     string
	Status task.Status
	Type   task.Type
}

// Attempt is one attempt of a task that did not complete: how it ended
// (failed, timed_out, discarded, cancelled, or pending when its lease
// expired and the task went back to the queue) and why.
type Attempt struct {
	TaskID     string
	Attempt    int
	Status     task.Status
	Summary    string
	Category   string
	WorkerID   string
	StartedAt  time.Time
	FinishedAt time.Time
}

// Count is the number of tasks of one status and type.
type Count struct {
	Status task.Status
	Type   task.Type
	N      int64
}

// DayBucket is one bucket of one day's duration histogram.
type DayBucket struct {
	Day time.Time
	metrics.Bucket
}

// Daily is one row of the daily rollup, or a change to it.
type Daily struct {
	// Day is the row's UTC day (any instant of it in a change; its
	// midnight when read).
	Day         time.Time
	Type        task.Type
	Model       string
	Executor    string
	Created     int64
	Completed   int64
	Failed      int64
	TimedOut    int64
	DurationSum float64
	ValueSum    float64
	CostSum     float64
	// The usage of the finished tasks that reported it (UsageTasks).
	TokensIn   int64
	TokensOut  int64
	CostUSD    float64
	UsageTasks int64
}

// Finished is how many tasks finished, completed or not (failed and
// timed out), in an hour or a window.
type Finished struct {
	Completed int64
	Failed    int64
}

// StageOutput is what one of an idea's completed loop tasks produced.
type StageOutput struct {
	TaskID      string
	Type        task.Type
	Output      string
	Artifact    string
	CompletedAt time.Time
}

// IdeaFailures is how an idea's loop tasks have been failing: Failures
// in a row since the last completed one, the last at LastAt.
type IdeaFailures struct {
	Failures  int
	LastAt    time.Time
	LastError string
}

// FailureCount is the failed tasks of one error category.
type FailureCount struct {
	Category  string
	Failed    int64
	Diagnosed int64
}

// Stats is the repository of the counters and rollups maintained with
// every status change.
type Stats interface {
	// AddCounts adds the deltas to the status counters, in a fixed order
	// (so concurrent transactions lock the counter rows in the same order).
	AddCounts(ctx context.Context, deltas []Count) error
	// QueueAddCounts queues AddCounts' statements into b (a use case
	// sends its writes after a read in one batch).
	QueueAddCounts(b *database.Batch, deltas []Count)
	// Counts returns every non-empty counter.
	Counts(ctx context.Context) ([]Count, error)
	// QueueCounts queues Counts' read into b.
	QueueCounts(b *database.Batch, out *[]Count)
	// IdeaCount counts the idea's tasks of status and of typ (either
	// empty: any), from the counts kept per idea.
	IdeaCount(ctx context.Context, ideaID string, status task.Status, typ task.Type) (int, error)
	// AddDaily adds d to its day's row.
	AddDaily(ctx context.Context, d Daily) error
	// QueueAddDaily queues AddDaily's statement into b.
	QueueAddDaily(b *database.Batch, d Daily)
	// DailyBetween sums the rows of the days starting in [from, to) by
	// task type, model and executor (Day is zero in the result).
	DailyBetween(ctx context.Context, from, to time.Time) ([]Daily, error)
	// QueueDailyBetween queues DailyBetween's read into b.
	QueueDailyBetween(b *database.Batch, from, to time.Time, out *[]Daily)
	// AddFinished adds f to the finished counts of the hour holding at.
	AddFinished(ctx context.Context, at time.Time, f Finished) error
	// QueueAddFinished queues AddFinished's statement into b.
	QueueAddFinished(b *database.Batch, at time.Time, f Finished)
	// QueueFinishedSince queues the sum of the finished counts of the
	// hours starting at or after since into b.
	QueueFinishedSince(b *database.Batch, since time.Time, out *Finished)
	// AddDuration counts one duration in bucket (metrics.BucketOf) of the
	// day holding at.
	AddDuration(ctx context.Context, at time.Time, bucket int) error
	// QueueAddDuration queues AddDuration's statement into b.
	QueueAddDuration(b *database.Batch, at time.Time, bucket int)
	// DurationsBetween sums the duration histograms of the days starting
	// in [from, to), by bucket in ascending order.
	DurationsBetween(ctx context.Context, from, to time.Time) ([]metrics.Bucket, error)
	// QueueDurationsBetween queues DurationsBetween's read into b.
	QueueDurationsBetween(b *database.Batch, from, to time.Time, out *[]metrics.Bucket)
	// DailyByDay sums the rows of each day starting in [from, to), every
	// route together, by day in ascending order (only days with rows).
	DailyByDay(ctx context.Context, from, to time.Time) ([]Daily, error)
	// DurationsByDay returns the duration histogram of each day starting
	// in [from, to), by day and then bucket in ascending order.
	DurationsByDay(ctx context.Context, from, to time.Time) ([]DayBucket, error)
	// AddFailure counts one failed task of the category.
	AddFailure(ctx context.Context, category string, diagnosed bool) error
	// QueueAddFailure queues AddFailure's statement into b.
	QueueAddFailure(b *database.Batch, category string, diagnosed bool)
	// QueueIdeaFailed queues into b one more failure of the idea's loop
	// tasks, at at, with its summary.
	QueueIdeaFailed(b *database.Batch, ideaID string, at time.Time, summary string)
	// QueueIdeaSucceeded queues into b the end of the idea's failures.
	QueueIdeaSucceeded(b *database.Batch, ideaID string)
	// IdeaFailures returns the failures of those of the ideas whose loop
	// tasks failed since their last success.
	IdeaFailures(ctx context.Context, ideaIDs []string) (map[string]IdeaFailures, error)
	// Failures returns the failure counts by category.
	Failures(ctx context.Context) ([]FailureCount, error)
}

// Outcome is one prompt A/B measurement.
type Outcome struct {
	TaskID       string
	Variant      string
	ValueScore   float64
	ResourceCost float64
	CreatedAt    time.Time
}

// Prompts is the prompt A/B repository.
type Prompts interface {
	// RecordOutcome stores the task's outcome; false when the task already
	// has one (nothing is written).
	RecordOutcome(ctx context.Context, o Outcome) (bool, error)
	// LockArm returns the variant's record, locked (a zero record when the
	// variant has none yet).
	LockArm(ctx context.Context, variant string) (abtest.Arm, error)
	// SaveArm writes the variant's record.
	SaveArm(ctx context.Context, a abtest.Arm, at time.Time) error
	// Arms returns every variant's record.
	Arms(ctx context.Context) ([]abtest.Arm, error)
	// QueueDeleteOutcomes queues into b the deletion of the tasks'
	// outcomes (their variants' records keep the sums).
	QueueDeleteOutcomes(b *database.Batch, taskIDs []string)
	// StartProbe marks a blocked variant's probe as made (abtest.Probing)
	// unless it was already; false when it was (another task took the
	// probe).
	StartProbe(ctx context.Context, variant string) (bool, error)
	// InsertPrompt stores a prompt version; ErrAlreadyExists when the name
	// has that version.
	InsertPrompt(ctx context.Context, p Prompt) error
	// Prompt returns a version of a prompt (its newest when version is
	// 0); ErrNotFound when there is none.
	Prompt(ctx context.Context, name string, version int) (Prompt, error)
	// LatestPrompts returns the newest version of every prompt of the
	// task type (of every type when empty), by name, each with its count
	// of versions.
	LatestPrompts(ctx context.Context, typ task.Type) ([]Prompt, error)
}

// Prompt is one version of a stored prompt: a template of one task type
// (prompt.Render), whose name is its A/B variant's.
type Prompt struct {
	Name      string
	Version   int
	Type      task.Type
	Text      string
	CreatedAt time.Time
	// Versions counts the name's versions (LatestPrompts only).
	Versions int
}

// OutboxItem is an idea advancement a completed task owes the portfolio.
type OutboxItem struct {
	TaskID        string
	IdeaID        string
	TaskType      task.Type
	CreatedAt     time.Time
	DeliveredAt   time.Time
	Attempts      int
	LastError     string
	NextAttemptAt time.Time
}

// Outbox is the repository of idea advancements to deliver.
type Outbox interface {
	// Enqueue stores the item; false when the task already has one.
	Enqueue(ctx context.Context, it OutboxItem) (bool, error)
	// QueueEnqueue queues Enqueue's statement into b; queued reports,
	// once b is sent, whether the item was new.
	QueueEnqueue(b *database.Batch, it OutboxItem, queued *bool)
	// Get returns the task's item; ErrNotFound when there is none.
	Get(ctx context.Context, taskID string) (OutboxItem, error)
	// Take returns up to limit undelivered items due at now, oldest due
	// first, and moves each one's next attempt to until, so another
	// deliverer leaves them alone while this one works (a lost deliverer's
	// items come due again at until).
	Take(ctx context.Context, now, until time.Time, limit int) ([]OutboxItem, error)
	// TakeOne is Take for one task's item, whether due or not; ErrNotFound
	// when it has none or it was delivered.
	TakeOne(ctx context.Context, taskID string, until time.Time) (OutboxItem, error)
	// Settle records an attempt: the item's attempts, last error, and
	// either its delivery time or its next attempt.
	Settle(ctx context.Context, it OutboxItem) error
	// QueueBacklog queues the read of the undelivered items' count and the
	// creation time of the oldest into b. The read covers the undelivered
	// items only (a partial index), however many were delivered.
	QueueBacklog(b *database.Batch, out *OutboxBacklog)
	// QueueDeleteDelivered queues into b the deletion of the tasks' items
	// that were delivered; one still undelivered stays to be delivered.
	QueueDeleteDelivered(b *database.Batch, taskIDs []string)
}

// OutboxBacklog is the idea advancements not delivered yet.
type OutboxBacklog struct {
	Items int64
	// Oldest is when the oldest of them was queued; zero when none waits.
	Oldest time.Time
}

// LoopPass is one pass of the pipeline loop as stored: the iteration and
// the replica that made it. Empty strings are the parts a pass did not
// reach (an idle pass names no idea).
type LoopPass struct {
	Holder string
	// Iteration's ID is the pass's id.
	loop.Iteration
}

// LoopPasses is the repository of the pipeline loop's passes.
type LoopPasses interface {
	// Insert stores a pass and counts it under its outcome.
	Insert(ctx context.Context, p LoopPass) error
	// Latest returns the newest pass; ErrNotFound before the first.
	Latest(ctx context.Context) (LoopPass, error)
	// Counts returns every pass ever made, by outcome.
	Counts(ctx context.Context) (map[string]int64, error)
	// Prune deletes the passes that finished before t (the counts stay).
	Prune(ctx context.Context, before time.Time) (int64, error)
}
