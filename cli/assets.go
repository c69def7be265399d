package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	commonv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
)

// --- assets ----------------------------------------------------------------------

func (e *env) assetsCommand() *cobra.Command {
	return group("assets", "Create, list and show assets (what contributions and distributions are about)",
		withIDs(e.assetsCreate(), "id"), withIDs(e.assetsList(), "assets.id"), withIDs(e.assetsShow(), "id"))
}

func (e *env) assetsCreate() *cobra.Command {
	req := &ledgerv1.CreateAssetRequest{}
	cmd := &cobra.Command{
		Use:     "create NAME --type TYPE",
		Short:   "Create an asset (operators)",
		Example: `  ASSET=$(foundry assets create kettle-firmware --type CODE -o id)`,
		Args:    args("NAME"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		if req.Type == "" {
			return usagef("--type is required (one of %s)", strings.Join(assetTypes, ", "))
		}
		req.Name = a[0]
		raw, err := e.client.call(ctx, opCreateAsset, req, &ledgerv1.CreateAssetResponse{}, callOpts{})
		return e.object(raw, err)
	})
	choiceVar(cmd, &req.Type, "type", assetTypes, "CODE, MODEL, CONTENT or DATA (required)")
	cmd.Flags().StringVar(&req.Description, "description", "", "what the asset is")
	return cmd
}

func (e *env) assetsList() *cobra.Command {
	var limit, offset int32
	cmd := &cobra.Command{Use: "list", Short: "List assets", Args: cobra.NoArgs}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		req := &ledgerv1.ListAssetsRequest{Offset: offset}
		if cmd.Flags().Changed("limit") {
			req.Limit = proto.Int32(limit)
		}
		resp := &ledgerv1.ListAssetsResponse{}
		raw, err := e.client.call(ctx, opListAssets, req, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		e.pageHint("assets", len(resp.GetAssets()), resp.GetPagination(), false)
		rows := make([][]string, len(resp.GetAssets()))
		for i, as := range resp.GetAssets() {
			rows[i] = []string{as.GetId(), as.GetType(), fmt.Sprint(as.GetContributionCount()), formatFloat(as.GetTotalCost()),
				as.GetCreatedAt(), as.GetName()}
		}
		return e.table([]string{"ID", "TYPE", "CONTRIBUTIONS", "TOTAL_COST", "CREATED", "NAME"}, rows)
	})
	cmd.Flags().Int32Var(&limit, "limit", 0, "assets per page (server default 50, at most 500)")
	cmd.Flags().Int32Var(&offset, "offset", 0, "assets to skip")
	return cmd
}

func (e *env) assetsShow() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show ASSET_ID",
		Short: "Show one asset: its contributions' count and total cost",
		Args:  args("ASSET_ID"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		raw, err := e.client.call(ctx, opGetAsset, &ledgerv1.GetAssetRequest{Id: a[0]}, &ledgerv1.GetAssetResponse{}, callOpts{})
		return e.object(raw, err)
	})
	return cmd
}

// --- contributions ---------------------------------------------------------------

func (e *env) contributionsCommand() *cobra.Command {
	return group("contributions", "Record, list, show and review contributions to assets", withIDs(e.contributionsCreate(), "id"),
		withIDs(e.contributionsList(), "contributions.id"), withIDs(e.contributionsShow(), "id"), withIDs(e.contributionsReview(), "id"))
}

// contributionsReview accepts or rejects a claimed contribution (an
// operator).
func (e *env) contributionsReview() *cobra.Command {
	req := &ledgerv1.ReviewContributionRequest{}
	var accept, reject bool
	var cost, coherence float64
	cmd := &cobra.Command{
		Use:   "review CONTRIBUTION_ID (--accept [--cost C] [--coherence X] | --reject) --reason TEXT",
		Short: "Accept or reject a claimed contribution (operators)",
		Long: `Review a contribution a contributor claimed (operators): --accept makes it
count in every distribution, one paid in CC included, at --cost (the claim's
cost when not given) and at --coherence (0 to 1, the base 0.5 when not
given); --reject makes it weigh nothing. --reason says why. A contribution
is reviewed once; one an operator recorded or a signed GitHub delivery
verified needs none.`,
		Example: `  foundry contributions review "$CONTRIBUTION" --accept --cost 4 --coherence 0.7 --reason "smaller than claimed"`,
		Args:    args("CONTRIBUTION_ID"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		f := cmd.Flags()
		switch {
		case accept == reject:
			return usagef("give one of --accept and --reject")
		case strings.TrimSpace(req.Reason) == "":
			return usagef("--reason is required: it says why, and stays with the contribution")
		case reject && (f.Changed("cost") || f.Changed("coherence")):
			return usagef("--cost and --coherence are for --accept: a rejected contribution weighs nothing")
		}
		req.Id, req.Verdict = a[0], "accept"
		if reject {
			req.Verdict = "reject"
		}
		if f.Changed("cost") {
			req.CostAmount = proto.Float64(cost)
		}
		if f.Changed("coherence") {
			req.CoherenceScore = proto.Float64(coherence)
		}
		raw, err := e.client.call(ctx, opReviewContribution, req, &ledgerv1.ReviewContributionResponse{}, callOpts{})
		return e.object(raw, err)
	})
	f := cmd.Flags()
	f.BoolVar(&accept, "accept", false, "accept the claim")
	f.BoolVar(&reject, "reject", false, "reject the claim")
	f.Float64Var(&cost, "cost", 0, "the corrected cost (with --accept)")
	f.Float64Var(&coherence, "coherence", 0, "the reviewer's coherence score, 0 to 1 (with --accept)")
	f.StringVar(&req.Reason, "reason", "", "why (required)")
	return cmd
}

// who names a contributor in a table: its handle when it registered one,
// else its id (a contributor a contribution or a push created has none).
func who(id string, handle *wrapperspb.StringValue) string {
	if handle != nil {
		return handle.GetValue()
	}
	return id
}

func (e *env) contributorsCommand() *cobra.Command {
	return group("contributors", "List contributors with their handles and CC balances", withIDs(e.contributorsList(), "contributors.id"))
}

func (e *env) contributorsList() *cobra.Command {
	var handle string
	var limit, offset int32
	cmd := &cobra.Command{Use: "list [--handle HANDLE]", Short: "List contributors, oldest first, with their CC balances", Args: cobra.NoArgs}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		req := &ledgerv1.ListContributorsRequest{Handle: handle, Offset: offset}
		if cmd.Flags().Changed("limit") {
			req.Limit = proto.Int32(limit)
		}
		resp := &ledgerv1.ListContributorsResponse{}
		raw, err := e.client.call(ctx, opListContributors, req, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		e.pageHint("contributors", len(resp.GetContributors()), resp.GetPagination(), false)
		rows := make([][]string, len(resp.GetContributors()))
		for i, c := range resp.GetContributors() {
			h := "-"
			if c.GetHandle() != nil {
				h = c.GetHandle().GetValue()
			}
			rows[i] = []string{c.GetId(), h, c.GetTrustLevel(), formatFloat(c.GetAvailableCc()), formatFloat(c.GetStakedCc()),
				formatFloat(c.GetCoolingCc()), c.GetCreatedAt()}
		}
		return e.table([]string{"ID", "HANDLE", "TRUST", "AVAILABLE_CC", "STAKED_CC", "COOLING_CC", "CREATED"}, rows)
	})
	f := cmd.Flags()
	f.StringVar(&handle, "handle", "", "only the contributor with this handle")
	f.Int32Var(&limit, "limit", 0, "contributors per page (server default 50, at most 500)")
	f.Int32Var(&offset, "offset", 0, "contributors to skip")
	return cmd
}

func (e *env) contributionsCreate() *cobra.Command {
	var contributor, metadata, idemKey string
	var cost float64
	req := &ledgerv1.CreateContributionRequest{}
	cmd := &cobra.Command{
		Use:     "create --asset ASSET_ID --cost X",
		Aliases: []string{"add"},
		Short:   "Record a contribution to an asset",
		Long: `Record a contribution to an asset. The contributor is --contributor, else the
session token's contributor (a contributor records only its own; operators
anyone's). --metadata is a JSON object (has_tests, has_docs and complexity
feed the coherence score). "contributions add" is the same command.`,
		Example: `  foundry contributions create --asset "$ASSET" --cost 12.5 --metadata '{"has_tests": true}'`,
		Args:    cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		if req.AssetId == "" {
			return usagef("--asset is required")
		}
		if !cmd.Flags().Changed("cost") {
			return usagef("--cost is required")
		}
		req.CostAmount = proto.Float64(cost)
		var err error
		if req.Metadata, err = jsonObject("--metadata", metadata); err != nil {
			return err
		}
		id, err := e.contributor(ctx, contributor)
		if err != nil {
			return err
		}
		req.ContributorId = id
		raw, err := e.client.call(ctx, opCreateContribution, req, &ledgerv1.CreateContributionResponse{}, callOpts{idempotencyKey: idemKey})
		return e.object(raw, err)
	})
	f := cmd.Flags()
	f.StringVar(&req.AssetId, "asset", "", "the asset's id (required)")
	f.Float64Var(&cost, "cost", 0, "the contribution's cost (required, >= 0)")
	f.StringVar(&contributor, "contributor", "", "the contributor's id (default: the session token's)")
	f.StringVar(&metadata, "metadata", "", "a JSON object stored with the contribution")
	f.StringVar(&idemKey, "idempotency-key", "", "record it at most once for this key (safe retries)")
	return cmd
}

func (e *env) contributionsList() *cobra.Command {
	var asset, contributor string
	var limit, offset int32
	cmd := &cobra.Command{
		Use:   "list [--asset ASSET_ID | --contributor CONTRIBUTOR_ID]",
		Short: "List an asset's or a contributor's contributions (default: the session token's contributor)",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		if asset != "" && contributor != "" {
			return usagef("--asset and --contributor name two lists: give one")
		}
		if asset == "" && contributor == "" && e.cfg.Token == "" {
			return usagef("name the asset (--asset) or the contributor (--contributor), or set a session token (--token, FOUNDRY_TOKEN, " +
				"or the one foundry register keeps) for its contributor's")
		}
		var lim *int32
		if cmd.Flags().Changed("limit") {
			lim = proto.Int32(limit)
		}
		var (
			raw  []byte
			err  error
			list []*ledgerv1.Contribution
			page *commonv1.Pagination
		)
		if asset != "" {
			resp := &ledgerv1.ListAssetContributionsResponse{}
			raw, err = e.client.call(ctx, opListAssetContributions,
				&ledgerv1.ListAssetContributionsRequest{AssetId: asset, Limit: lim, Offset: offset}, resp, callOpts{})
			list, page = resp.GetContributions(), resp.GetPagination()
		} else {
			id, cerr := e.contributor(ctx, contributor)
			if cerr != nil {
				return cerr
			}
			resp := &ledgerv1.ListContributorContributionsResponse{}
			raw, err = e.client.call(ctx, opListContributorContributions,
				&ledgerv1.ListContributorContributionsRequest{ContributorId: id, Limit: lim, Offset: offset}, resp, callOpts{})
			list, page = resp.GetContributions(), resp.GetPagination()
		}
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		e.pageHint("contributions", len(list), page, false)
		rows := make([][]string, len(list))
		for i, c := range list {
			rows[i] = []string{c.GetId(), who(c.GetContributorId(), c.GetContributorHandle()), c.GetAssetId(), formatFloat(c.GetCostAmount()),
				formatFloat(c.GetCoherenceScore()), c.GetSource(), c.GetCreatedAt()}
		}
		return e.table([]string{"ID", "CONTRIBUTOR", "ASSET", "COST", "COHERENCE", "SOURCE", "CREATED"}, rows)
	})
	f := cmd.Flags()
	f.StringVar(&asset, "asset", "", "the asset's contributions")
	f.StringVar(&contributor, "contributor", "", "the contributor's contributions (default: the session token's)")
	f.Int32Var(&limit, "limit", 0, "contributions per page (server default 500, at most 500)")
	f.Int32Var(&offset, "offset", 0, "contributions to skip")
	return cmd
}

func (e *env) contributionsShow() *cobra.Command {
	cmd := &cobra.Command{Use: "show CONTRIBUTION_ID", Short: "Show one contribution", Args: args("CONTRIBUTION_ID")}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		raw, err := e.client.call(ctx, opGetContribution, &ledgerv1.GetContributionRequest{Id: a[0]},
			&ledgerv1.GetContributionResponse{}, callOpts{})
		return e.object(raw, err)
	})
	return cmd
}

// jsonObject reads a flag's JSON object; nil for an empty value.
func jsonObject(flag, value string) (*structpb.Struct, error) {
	if value == "" {
		return nil, nil
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal([]byte(value), s); err != nil {
		return nil, usagef("%s must be a JSON object: %v", flag, err)
	}
	return s, nil
}

// --- distributions -----------------------------------------------------------------

func (e *env) distributionsCommand() *cobra.Command {
	return group("distributions", "Distribute an asset's value to its contributors; list and show distributions",
		withIDs(e.distributionsCreate(), "id"), withIDs(e.distributionsList(), "distributions.id"), withIDs(e.distributionsShow(), "id"))
}

func (e *env) distributionsCreate() *cobra.Command {
	req := &ledgerv1.CreateDistributionRequest{}
	var value float64
	cmd := &cobra.Command{
		Use:   "create --asset ASSET_ID --value X [--pay-cc]",
		Short: "Distribute a value over an asset's contributors, by their weight (operators; --pay-cc: administrator)",
		Long: `Distribute --value over the asset's contributors, in proportion to their
contributions' weight; the payouts sum exactly to the value. With --pay-cc
each payout is minted as CC into the payee's available balance
(administrator; the treasury must back it).`,
		Example: `  foundry distributions create --asset "$ASSET" --value 100`,
		Args:    cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		if req.AssetId == "" {
			return usagef("--asset is required")
		}
		if !cmd.Flags().Changed("value") {
			return usagef("--value is required")
		}
		req.ValueAmount = value
		resp := &ledgerv1.CreateDistributionResponse{}
		raw, err := e.client.call(ctx, opCreateDistribution, req, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		return e.printDistribution(raw, resp.GetDistribution(), 0)
	})
	f := cmd.Flags()
	f.StringVar(&req.AssetId, "asset", "", "the asset's id (required)")
	f.Float64Var(&value, "value", 0, "the value to distribute (required, >= 0)")
	f.BoolVar(&req.PayCc, "pay-cc", false, "pay the payouts as CC (administrator)")
	return cmd
}

func (e *env) distributionsShow() *cobra.Command {
	var limit, offset int32
	cmd := &cobra.Command{
		Use:   "show DISTRIBUTION_ID",
		Short: "Show a distribution and a page of its payouts, largest first",
		Args:  args("DISTRIBUTION_ID"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		req := &ledgerv1.GetDistributionRequest{Id: a[0], Offset: offset}
		if cmd.Flags().Changed("limit") {
			req.Limit = proto.Int32(limit)
		}
		resp := &ledgerv1.GetDistributionResponse{}
		raw, err := e.client.call(ctx, opGetDistribution, req, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		return e.printDistribution(raw, resp.GetDistribution(), offset)
	})
	cmd.Flags().Int32Var(&limit, "limit", 0, "payouts per page (server default 100, at most 1000)")
	cmd.Flags().Int32Var(&offset, "offset", 0, "payouts to skip")
	return cmd
}

// printDistribution prints a distribution a field per line, then its page
// of payouts (from offset) as a table: a distribution over many
// contributors would otherwise be one line of JSON. The page's pagination
// is no line of its own: the note after the table says what it says.
func (e *env) printDistribution(raw []byte, d *ledgerv1.Distribution, offset int32) error {
	fields, err := objectFields(raw)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, f := range fields {
		if f.name != "payouts" && f.name != "pagination" {
			rows = append(rows, []string{f.name, cell(f.value)})
		}
	}
	if err := e.table(nil, rows); err != nil {
		return err
	}
	payouts := make([][]string, len(d.GetPayouts()))
	for i, p := range d.GetPayouts() {
		payouts[i] = []string{who(p.GetContributorId(), p.GetContributorHandle()), formatFloat(p.GetAmount())}
	}
	fmt.Fprintln(e.stdout)
	if err := e.table([]string{"CONTRIBUTOR", "AMOUNT"}, payouts); err != nil {
		return err
	}
	if shown := int64(offset) + int64(len(d.GetPayouts())); shown < d.GetPayoutCount() {
		e.note("%d of %d payouts shown: foundry distributions show %s --offset %d for more\n",
			len(d.GetPayouts()), d.GetPayoutCount(), d.GetId(), shown)
	}
	return nil
}

func (e *env) distributionsList() *cobra.Command {
	var asset string
	var limit, offset int32
	cmd := &cobra.Command{
		Use:   "list --asset ASSET_ID",
		Short: "List an asset's distributions, newest first",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		if asset == "" {
			return usagef("--asset is required")
		}
		req := &ledgerv1.ListAssetDistributionsRequest{AssetId: asset, Offset: offset}
		if cmd.Flags().Changed("limit") {
			req.Limit = proto.Int32(limit)
		}
		resp := &ledgerv1.ListAssetDistributionsResponse{}
		raw, err := e.client.call(ctx, opListAssetDistributions, req, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		e.pageHint("distributions", len(resp.GetDistributions()), resp.GetPagination(), false)
		rows := make([][]string, len(resp.GetDistributions()))
		for i, d := range resp.GetDistributions() {
			rows[i] = []string{d.GetId(), formatFloat(d.GetValueAmount()), fmt.Sprint(d.GetPayoutCount()), fmt.Sprint(d.GetPaidCc()),
				d.GetCreatedAt()}
		}
		return e.table([]string{"ID", "VALUE", "PAYOUTS", "PAID_CC", "CREATED"}, rows)
	})
	f := cmd.Flags()
	f.StringVar(&asset, "asset", "", "the asset's id (required)")
	f.Int32Var(&limit, "limit", 0, "distributions per page (server default 20, at most 100)")
	f.Int32Var(&offset, "offset", 0, "distributions to skip")
	return cmd
}
