package sqlcore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ---------------------------------------------------------------------------
// 8. POST /api/cc/stake (and POST /api/ideas/{idea_id}/stake)
//
// Mirrors ledger handler.Stake (handler/credit.go: positive, owner →
// authenticate → sqlstore.Identity.SessionByTokenHash, idem) →
// usecase.App.Stake (usecase/money.go): the idea from the portfolio (over
// gRPC in Foundry, which runs the portfolio's sqlstore.Ideas.Get: the idea
// row and its tags; the bare server runs that SELECT on portfolio.ideas
// directly), then the stake's transaction [with an Idempotency-Key: the
// idempotency_keys read first and the record saved last]: the ledger's mode
// lock taken shared (a freeze takes it exclusively), the economy's mode,
// then the contributor's two accounts in descending account-name order (the
// staked one upserted, then the available one debited only when it holds
// the amount: Apply's order, which an unstake's lock of the staked account
// shares), the
// entry (audit_seq 0), its two lines and its audit entry queued in
// ledger.audit_queue. No stake reads or writes the economy row, so stakes
// from different contributors do not wait for each other.
//
// Two round trips: round trip 1 is the session, the idea, BEGIN, [the
// idempotency read,] and every statement of the transaction. Go then checks
// the session, the owner, the idea, [the key,] the mode and the debit's row;
// round trip 2 is [the idempotency record and] COMMIT, or on a refusal the
// ROLLBACK that release sends. The writes need no result in Go, but COMMIT
// must wait for the checks.
//
// Deliberate difference: Foundry authenticates and reads the idea before it
// opens the transaction, and checks the mode and the debit before the next
// write; here the writes share round trip 1 with those reads and a refused
// stake's are rolled back: the same answer and the same database, the
// contributor's rows held for one round trip more on a refusal. A
// concurrent request that saved the same Idempotency-Key first makes the
// record's INSERT fail: as idempotency.Runner does, the transaction is
// rolled back and the stored answer replayed.
// dry_run is one round trip of reads (the idea, the contributor twice, the
// balances, the due cooling lots, the positions), as Foundry's dry run.

// minMovementMicros is credit.MinMovement: the least CC one movement may
// move (0.01 CC).
const minMovementMicros = microScale / 100

// checkMovement is usecase.checkMovement: an idea id that is not blank and
// at least credit.MinMovement, checked after the request's fields (and,
// for a stake that is not a dry run, after the caller's refusal).
func checkMovement(amount int64, ideaID string) error {
	var fields []FieldError
	if strings.TrimSpace(ideaID) == "" {
		fields = append(fields, field("idea_id", "is required"))
	}
	if amount < minMovementMicros {
		fields = append(fields, field("amount_cc", "must be at least 0.01 (the least CC one movement may move)"))
	}
	return collect(fields)
}

// modeLockClass is the ledger's sqlstore modeLockClass; keep equal. The
// lock's second key is the hash of the ledger's schema, as the ledger
// takes it (its search_path is its schema; bare's tables are qualified).
const modeLockClass int32 = 0x466f756d

const (
	maxCCMicros = 1_000_000_000 * microScale // handler maxCC
	maxIdemKey  = 200
	sqlSession  = `SELECT s.token_hash, s.created_at, s.expires_at, c.id, c.handle, c.trust_level, c.created_at
		FROM ledger.sessions s JOIN ledger.contributors c ON c.id = s.contributor_id
		WHERE s.token_hash = $1`
	sqlContributor = `SELECT id, handle, trust_level, created_at FROM ledger.contributors WHERE id = $1`
	sqlDueCooling  = `SELECT id, idea_id, amount, available_at, entry_id, created_at FROM ledger.cc_cooling
		WHERE contributor_id = $1 AND released_entry_id IS NULL AND available_at <= $2
		ORDER BY available_at, id`
	sqlIdempotency = `SELECT scope, key, request_hash, response, created_at FROM ledger.idempotency_keys
		WHERE scope = $1 AND key = $2`
	sqlSaveIdempotency = `INSERT INTO ledger.idempotency_keys (scope, key, request_hash, response, created_at)
		VALUES ($1, $2, $3, $4, $5)`
	sqlModeLock       = `SELECT pg_advisory_xact_lock_shared($1, hashtext('ledger'))`
	sqlMode           = `SELECT mode FROM ledger.economy WHERE id = 1`
	sqlDebitAvailable = `UPDATE ledger.cc_accounts SET balance = balance - $2 WHERE account = $1 AND balance >= $2
		RETURNING balance`
	sqlCreditStaked = `INSERT INTO ledger.cc_accounts (account, bucket, contributor_id, idea_id, balance)
		VALUES ($1, 'staked', $2, $3, $4)
		ON CONFLICT (account) DO UPDATE SET balance = ledger.cc_accounts.balance + excluded.balance RETURNING balance`
	sqlStakeEntry = `INSERT INTO ledger.cc_entries (id, kind, contributor_id, idea_id, amount, audit_seq, created_at)
		VALUES ($1, 'stake', $2, $3, $4, 0, $5)`
	sqlStakeLines = `INSERT INTO ledger.cc_lines (entry_id, account, bucket, contributor_id, idea_id, delta)
		VALUES ($1, $2, 'available', $3, NULL, $4), ($1, $5, 'staked', $3, $6, $7)`
	sqlQueueAudit = `INSERT INTO ledger.audit_queue (id, entry_id, kind, at, actor, subject, amount, attrs)
		VALUES ($1, $2, 'stake', $3, $4, $4, $5, $6)`
	sqlBalances = `SELECT bucket, COALESCE(SUM(balance), 0) FROM ledger.cc_accounts
		WHERE contributor_id = $1 GROUP BY bucket`
	sqlPositions = `SELECT a.idea_id, a.balance,
			(SELECT MIN(e.created_at) FROM ledger.cc_lines l JOIN ledger.cc_entries e ON e.id = l.entry_id WHERE l.account = a.account)
		FROM ledger.cc_accounts a
		WHERE a.contributor_id = $1 AND a.bucket = 'staked' AND a.balance > 0
		ORDER BY a.balance DESC, a.idea_id`
)

// nameEscaper is credit's: a stake's contributor has '%' and ':' escaped.
var nameEscaper = strings.NewReplacer("%", "%25", ":", "%3A")

// availableAccount and stakedAccount are credit.Account.Name of
// credit.Available(contributor) and credit.Staked(contributor, idea).
func availableAccount(contributor string) string { return "available:" + contributor }

func stakedAccount(contributor, idea string) string {
	return "staked:" + nameEscaper.Replace(contributor) + ":" + idea
}

// --- the stake ---------------------------------------------------------------

// StakeRequest is the stake routes' body.
type StakeRequest struct {
	ContributorID string  `json:"contributor_id"`
	IdeaID        string  `json:"idea_id"`
	AmountCC      float64 `json:"amount_cc"`
	DryRun        bool    `json:"dry_run"`
}

type projection struct {
	LowMultiplier  float64
	HighMultiplier float64
	StageUnlockPct float64
}

// stakeResult is usecase.StakeResult, field for field: its JSON is what an
// Idempotency-Key stores, so a replay decodes Foundry's records too.
type stakeResult struct {
	DryRun         bool
	ContributorID  string
	IdeaID         string
	AmountCC       int64
	PositionCC     int64
	AvailableAfter int64
	Projection     projection
	Stage          string
	CreatedAt      time.Time
}

// Stake is the stake routes' answer.
type Stake struct {
	DryRun           bool    `json:"dry_run"`
	ContributorID    string  `json:"contributor_id"`
	IdeaID           string  `json:"idea_id"`
	AmountCC         float64 `json:"amount_cc"`
	PositionCC       float64 `json:"position_cc"`
	AvailableCCAfter float64 `json:"available_cc_after"`
	Stage            string  `json:"stage"`
	Projection       struct {
		LowMultiplier  float64 `json:"low_multiplier"`
		HighMultiplier float64 `json:"high_multiplier"`
		StageUnlockPct float64 `json:"stage_unlock_pct"`
	} `json:"projection"`
}

// stageProjections and project are credit.Project.
var stageProjections = map[string]projection{
	"none":         {0.5, 3.0, 0},
	"specced":      {0.6, 2.6, 0.2},
	"implementing": {0.7, 2.2, 0.4},
	"testing":      {0.8, 1.8, 0.6},
	"reviewing":    {0.9, 1.5, 0.8},
	"complete":     {1.0, 1.2, 1},
}

func project(stage string, coherence float64) projection {
	p, ok := stageProjections[stage]
	if !ok {
		p = stageProjections["none"]
	}
	coherence = min(max(coherence, 0), 1)
	if up := p.HighMultiplier - 1; up > 0 {
		x := (1 + up*2*coherence) * 10_000
		p.HighMultiplier = float64(int64(x+0.5)) / 10_000
	}
	p.HighMultiplier = max(p.HighMultiplier, p.LowMultiplier)
	return p
}

// stakeRequestHash is handler.idem's request hash: SHA-256 of the
// StakeRequest's deterministic protobuf encoding (fields 1..4, zero values
// left out), written by hand.
func stakeRequestHash(req StakeRequest) string {
	var b []byte
	str := func(tag byte, s string) {
		if s != "" {
			b = append(b, tag)
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	str(0x0a, req.ContributorID)
	str(0x12, req.IdeaID)
	if bits := math.Float64bits(req.AmountCC); bits != 0 {
		b = append(b, 0x19)
		b = binary.LittleEndian.AppendUint64(b, bits)
	}
	if req.DryRun {
		b = append(b, 0x20, 0x01)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (res stakeResult) json() Stake {
	out := Stake{DryRun: res.DryRun, ContributorID: res.ContributorID, IdeaID: res.IdeaID,
		AmountCC: microsFloat(res.AmountCC), PositionCC: microsFloat(res.PositionCC),
		AvailableCCAfter: microsFloat(res.AvailableAfter), Stage: res.Stage}
	out.Projection.LowMultiplier = res.Projection.LowMultiplier
	out.Projection.HighMultiplier = res.Projection.HighMultiplier
	out.Projection.StageUnlockPct = res.Projection.StageUnlockPct
	return out
}

type coolingLot struct {
	id, ideaID string
	amount     int64
}

// readRows drains one result of the batch, scanning each row with scan.
func readRows(br pgx.BatchResults, scan func(pgx.Rows) error) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// readBalances is sqlstore.Credit.Balances' rows: available, staked, cooling.
func readBalances(br pgx.BatchResults) (available, staked, cooling int64, err error) {
	err = readRows(br, func(rows pgx.Rows) error {
		var (
			bucket string
			sum    int64
		)
		if err := rows.Scan(&bucket, &sum); err != nil {
			return err
		}
		switch bucket {
		case "available":
			available = sum
		case "staked":
			staked = sum
		case "cooling":
			cooling = sum
		}
		return nil
	})
	return available, staked, cooling, err
}

// readPosition is usecase.App.positionOn over sqlstore.Credit.Positions' rows.
func readPosition(br pgx.BatchResults, ideaID string) (int64, error) {
	var position int64
	err := readRows(br, func(rows pgx.Rows) error {
		var (
			idea   string
			amount int64
			since  *int64
		)
		if err := rows.Scan(&idea, &amount, &since); err != nil {
			return err
		}
		if idea == ideaID {
			position = amount
		}
		return nil
	})
	return position, err
}

// readCooling is sqlstore.Credit.DueCooling's rows.
func readCooling(br pgx.BatchResults) ([]coolingLot, error) {
	var lots []coolingLot
	err := readRows(br, func(rows pgx.Rows) error {
		var (
			l                  coolingLot
			available, created int64
			entryID            string
		)
		if err := rows.Scan(&l.id, &l.ideaID, &l.amount, &available, &entryID, &created); err != nil {
			return err
		}
		lots = append(lots, l)
		return nil
	})
	return lots, err
}

// readIdeaTags reads the result of sqlGetIdea: the idea and its tags.
func readIdeaTags(br pgx.BatchResults) (ideaRow, []string, bool, error) {
	rows, err := br.Query()
	if err != nil {
		return ideaRow{}, nil, false, err
	}
	defer rows.Close()
	var (
		first ideaRow
		tags  []string
		found bool
	)
	for rows.Next() {
		var tag *string
		i, err := scanIdea(rows, &tag)
		if err != nil {
			return ideaRow{}, nil, false, err
		}
		if !found {
			first, found = i, true
		}
		if tag != nil {
			tags = append(tags, *tag)
		}
	}
	return first, tags, found, rows.Err()
}

// readIdea reads the portfolio's GetIdea statement for the stake.
func readIdea(br pgx.BatchResults) (ideaRow, bool, error) {
	i, _, found, err := readIdeaTags(br)
	if err != nil {
		return ideaRow{}, false, fmt.Errorf("load idea: %w", err)
	}
	return i, found, nil
}

// readContributor reads GetContributor's row: whether it exists.
func readContributor(br pgx.BatchResults) (bool, error) {
	var (
		id, trust string
		handle    *string
		created   int64
	)
	err := br.QueryRow().Scan(&id, &handle, &trust, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get contributor: %w", err)
	}
	return true, nil
}

// Stake is POST /api/cc/stake (and POST /api/ideas/{idea_id}/stake) with
// req (the path's idea and the query's dry_run already in it), the session
// token of the request's Authorization header ("" when it has none, or not
// a Bearer one) and its Idempotency-Key header. The route answers the
// status it returns: 201 Created, or 200 OK for a dry run.
func (core *Core) Stake(ctx context.Context, req StakeRequest, token, idemKey string) (Stake, int, error) {
	// handler.positive and the required fields
	var fields []FieldError
	if req.ContributorID == "" {
		fields = append(fields, field("contributor_id", "is required"))
	}
	if req.IdeaID == "" {
		fields = append(fields, field("idea_id", "is required"))
	}
	amount, err := fromFloat(req.AmountCC)
	switch {
	case err != nil:
		fields = append(fields, field("amount_cc", "%s", err.Error()))
	case amount <= 0:
		fields = append(fields, field("amount_cc", "must be more than 0"))
	case amount > maxCCMicros:
		fields = append(fields, field("amount_cc", "must be at most %d", maxCCMicros/microScale))
	}
	if err := collect(fields); err != nil {
		return Stake{}, 0, err
	}
	if req.DryRun {
		if err := checkMovement(amount, req.IdeaID); err != nil {
			return Stake{}, 0, err
		}
		out, err := core.stakeDryRun(ctx, req, amount)
		if err != nil {
			return Stake{}, 0, err
		}
		return out, http.StatusOK, nil
	}
	if token == "" {
		return Stake{}, 0, fail(http.StatusUnauthorized, "missing or malformed Authorization header: want Bearer <session_token>")
	}
	tokenSum := sha256.Sum256([]byte(token)) // identity.HashToken
	res, status, err := core.stakeTx(ctx, req, amount, hex.EncodeToString(tokenSum[:]), strings.TrimSpace(idemKey))
	if err != nil {
		return Stake{}, 0, err
	}
	return res.json(), status, nil
}

// stakeTx runs the stake's transaction (see the route's comment).
func (core *Core) stakeTx(ctx context.Context, req StakeRequest, amount int64, tokenHash, idemKey string) (stakeResult, int, error) {
	c, err := core.pool.Acquire(ctx)
	if err != nil {
		return stakeResult{}, 0, fmt.Errorf("acquire a connection: %w", err)
	}
	defer release(c) // rolls back whatever a refusal or a failure left open
	at := now()
	scope := "stake:" + req.ContributorID // the owner is the session's contributor
	entryID := newID()
	available, staked := availableAccount(req.ContributorID), stakedAccount(req.ContributorID, req.IdeaID)
	// usecase.App.move's audit attrs: the entry, the idea, each line's delta.
	attrs, err := json.Marshal(map[string]string{"entry_id": entryID, "idea_id": req.IdeaID,
		"line:" + available: strconv.FormatInt(-amount, 10), "line:" + staked: strconv.FormatInt(amount, 10), "unit": "micro_cc"})
	if err != nil {
		return stakeResult{}, 0, fmt.Errorf("encode audit attrs: %w", err)
	}

	// Round trip 1.
	b := &pgx.Batch{}
	b.Queue(sqlSession, tokenHash)
	b.Queue(sqlGetIdea, req.IdeaID)
	b.Queue("BEGIN")
	if idemKey != "" {
		b.Queue(sqlIdempotency, scope, idemKey)
	}
	b.Queue(sqlModeLock, modeLockClass)
	b.Queue(sqlMode)
	b.Queue(sqlCreditStaked, staked, req.ContributorID, req.IdeaID, amount)
	b.Queue(sqlDebitAvailable, available, amount)
	b.Queue(sqlStakeEntry, entryID, req.ContributorID, req.IdeaID, amount, micros(at))
	b.Queue(sqlStakeLines, entryID, available, req.ContributorID, -amount, staked, req.IdeaID, amount)
	b.Queue(sqlQueueAudit, newID(), entryID, micros(at), req.ContributorID, amount, string(attrs))
	var (
		sessionOK        bool
		sessionOwner     string
		sessionExpiresAt *int64
		idea             ideaRow
		ideaFound        bool
		prev             *idemRecord
		mode             string
		debited          bool
		res              = stakeResult{ContributorID: req.ContributorID, AmountCC: amount}
	)
	err = send(ctx, c, b, func(br pgx.BatchResults) error {
		var (
			th, trust        string
			handle           *string
			created, cCreate int64
		)
		err := br.QueryRow().Scan(&th, &created, &sessionExpiresAt, &sessionOwner, &handle, &trust, &cCreate)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("find session: %w", err)
		default:
			sessionOK = true
		}
		if idea, ideaFound, err = readIdea(br); err != nil {
			return err
		}
		if _, err := br.Exec(); err != nil {
			return err
		}
		if idemKey != "" {
			if prev, err = readIdempotency(br.QueryRow()); err != nil {
				return err
			}
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("take the mode lock: %w", err)
		}
		if err := br.QueryRow().Scan(&mode); err != nil {
			return fmt.Errorf("read the mode: %w", err)
		}
		if err := br.QueryRow().Scan(&res.PositionCC); err != nil {
			return fmt.Errorf("credit %s: %w", staked, err)
		}
		switch err := br.QueryRow().Scan(&res.AvailableAfter); {
		case errors.Is(err, pgx.ErrNoRows): // less than amount available
		case err != nil:
			return fmt.Errorf("debit %s: %w", available, err)
		default:
			debited = true
		}
		for range 3 { // the entry, its lines, its audit entry
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	// A contributor without an available account (never funded): the
	// debit matched no row and the lines' INSERT, queued behind it, names
	// that missing account. As Foundry's Apply (whose batch stops at the
	// refused line), that is a short balance, answered by the checks below
	// (the transaction is rolled back on release).
	if err != nil && !(pgCode(err) == "23503" && !debited) {
		return stakeResult{}, 0, err
	}

	// The checks, in Foundry's order.
	switch {
	case !sessionOK:
		return stakeResult{}, 0, fail(http.StatusUnauthorized, "invalid session token")
	case sessionExpiresAt != nil && !time.Now().Before(fromMicros(*sessionExpiresAt)):
		return stakeResult{}, 0, fail(http.StatusUnauthorized, "session expired")
	case sessionOwner != req.ContributorID:
		return stakeResult{}, 0, fail(http.StatusForbidden, "the session's contributor may move only its own CC")
	case len(idemKey) > maxIdemKey:
		return stakeResult{}, 0, invalid(field("Idempotency-Key", "must be at most %d characters", maxIdemKey))
	}
	if err := checkMovement(amount, req.IdeaID); err != nil { // after the caller's refusal, as Foundry
		return stakeResult{}, 0, err
	}
	if !ideaFound {
		return stakeResult{}, 0, fail(http.StatusNotFound, "idea %s not found", req.IdeaID)
	}
	requestHash := ""
	if idemKey != "" {
		requestHash = stakeRequestHash(req)
		if prev != nil {
			return prev.replay(requestHash)
		}
	}
	switch {
	case mode == "frozen" || mode == "read_only": // usecase.allowed
		return stakeResult{}, 0, fail(http.StatusBadRequest, "%s", mode)
	case !debited:
		return stakeResult{}, 0, fail(http.StatusBadRequest, "insufficient balance: %s CC is more than is available",
			microsText(amount))
	}
	res.IdeaID, res.Projection, res.Stage, res.CreatedAt = idea.ID, project(idea.Stage, idea.Confidence), idea.Stage, at

	// Round trip 2: [the record and] COMMIT.
	b = &pgx.Batch{}
	if idemKey != "" {
		stored, err := json.Marshal(res)
		if err != nil {
			return stakeResult{}, 0, fmt.Errorf("encode idempotent response: %w", err)
		}
		b.Queue(sqlSaveIdempotency, scope, idemKey, requestHash, string(stored), micros(at))
	}
	b.Queue("COMMIT")
	err = send(ctx, c, b, func(br pgx.BatchResults) error {
		for range b.Len() {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	if idemKey != "" && pgCode(err) == "23505" { // a concurrent request saved the key first
		if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
			return stakeResult{}, 0, err
		}
		prev, err := readIdempotency(c.QueryRow(ctx, sqlIdempotency, scope, idemKey))
		if err != nil {
			return stakeResult{}, 0, fmt.Errorf("read the idempotency key a concurrent request stored: %w", err)
		}
		if prev == nil {
			return stakeResult{}, 0, errors.New("the idempotency key a concurrent request stored is gone")
		}
		return prev.replay(requestHash)
	}
	if err != nil {
		return stakeResult{}, 0, err
	}
	return res, http.StatusCreated, nil
}

// idemRecord is a stored idempotency record: the request's hash and the
// answer it got.
type idemRecord struct {
	requestHash, response string
}

// readIdempotency reads sqlIdempotency's row (nil when there is none).
func readIdempotency(row pgx.Row) (*idemRecord, error) {
	var (
		scope, key string
		rec        idemRecord
		createdAt  int64
	)
	switch err := row.Scan(&scope, &key, &rec.requestHash, &rec.response, &createdAt); {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("find idempotency key: %w", err)
	}
	return &rec, nil
}

// replay is idempotency's replay: the stored answer for the same request,
// a 422 for another.
func (rec idemRecord) replay(requestHash string) (stakeResult, int, error) {
	if rec.requestHash != requestHash {
		return stakeResult{}, 0, invalid(field("Idempotency-Key", "was used before with a different request body"))
	}
	var res stakeResult
	if err := json.Unmarshal([]byte(rec.response), &res); err != nil {
		return stakeResult{}, 0, err
	}
	return res, http.StatusCreated, nil
}

// stakeDryRun is usecase.App.Stake with DryRun: reads only, one round trip.
func (core *Core) stakeDryRun(ctx context.Context, req StakeRequest, amount int64) (Stake, error) {
	at := now()
	b := &pgx.Batch{}
	b.Queue(sqlGetIdea, req.IdeaID)
	b.Queue(sqlContributor, req.ContributorID) // mustExist
	b.Queue(sqlContributor, req.ContributorID) // Balances' mustExist
	b.Queue(sqlBalances, req.ContributorID)
	b.Queue(sqlDueCooling, req.ContributorID, micros(at))
	b.Queue(sqlPositions, req.ContributorID)
	var (
		idea                ideaRow
		ideaFound, exists   bool
		available, position int64
	)
	err := core.run(ctx, b, func(br pgx.BatchResults) error {
		var err error
		if idea, ideaFound, err = readIdea(br); err != nil {
			return err
		}
		if exists, err = readContributor(br); err != nil {
			return err
		}
		if _, err = readContributor(br); err != nil {
			return err
		}
		if available, _, _, err = readBalances(br); err != nil {
			return fmt.Errorf("read balances: %w", err)
		}
		due, err := readCooling(br)
		if err != nil {
			return fmt.Errorf("read cooling unstakes: %w", err)
		}
		for _, l := range due {
			available += l.amount
		}
		if position, err = readPosition(br, idea.ID); err != nil {
			return fmt.Errorf("read positions: %w", err)
		}
		return nil
	})
	switch {
	case err != nil:
	case !ideaFound:
		err = fail(http.StatusNotFound, "idea %s not found", req.IdeaID)
	case !exists:
		err = fail(http.StatusNotFound, "contributor %s not found", req.ContributorID)
	}
	if err != nil {
		return Stake{}, err
	}
	res := stakeResult{DryRun: true, ContributorID: req.ContributorID, IdeaID: idea.ID, AmountCC: amount,
		PositionCC: position + amount, AvailableAfter: available - amount,
		Projection: project(idea.Stage, idea.Confidence), Stage: idea.Stage}
	return res.json(), nil
}
