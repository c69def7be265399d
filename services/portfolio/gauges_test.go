package portfolio

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/gauges"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

func TestStageSamples(t *testing.T) {
	t.Parallel()
	got := stageSamples(map[idea.Stage]int{idea.Specced: 2, idea.Complete: 1})
	require.Equal(t, []gauges.Sample{
		{Name: "foundry_portfolio_ideas", Labels: []string{"none"}, Value: 0},
		{Name: "foundry_portfolio_ideas", Labels: []string{"specced"}, Value: 2},
		{Name: "foundry_portfolio_ideas", Labels: []string{"implementing"}, Value: 0},
		{Name: "foundry_portfolio_ideas", Labels: []string{"testing"}, Value: 0},
		{Name: "foundry_portfolio_ideas", Labels: []string{"reviewing"}, Value: 0},
		{Name: "foundry_portfolio_ideas", Labels: []string{"complete"}, Value: 1},
	}, got, "every stage word in pipeline order, zeros included")
	require.Equal(t, stageGauges[0].Name, got[0].Name)
}
