package report

import "github.com/portmatrix/portmatrix/internal/results"

// The results folder is internal/results' format; the report reads it
// through that package and names its types here for brevity.
type (
	Results    = results.Folder
	Run        = results.Run
	Host       = results.Host
	GPU        = results.GPU
	Toolchain  = results.Toolchain
	CellCounts = results.Cells
	Section    = results.Section
	Record     = results.Record
	BuildRow   = results.BuildRow
)

// LoadResults reads a results folder (results.Load).
func LoadResults(dir string) (*Results, error) { return results.Load(dir) }

const (
	runFile    = results.RunFile
	jsonlFile  = results.JSONLFile
	csvFile    = results.CSVFile
	buildFile  = results.BuildFile
	figuresDir = results.FiguresDir
	claimsFile = results.ClaimsFile
	reportFile = results.ReportFile
	kindKernel = results.KindKernel
)
