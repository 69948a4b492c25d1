package console

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/client-go/util/jsonpath"
)

// tableWriter is kubectl's tabwriter (printers.GetNewTabWriter): cells
// padded to the column's widest cell plus three spaces, at least six wide,
// the last cell of a row not padded, and (RememberWidths) the widths kept
// across flushes, so that the rows a watch prints later line up with the
// header printed first.
type tableWriter struct {
	w      io.Writer
	widths []int
	rows   [][]string
}

func newTableWriter(w io.Writer) *tableWriter { return &tableWriter{w: w} }

func (t *tableWriter) row(cells []string) { t.rows = append(t.rows, cells) }

func (t *tableWriter) flush() {
	for _, r := range t.rows {
		for i, c := range r[:max(len(r)-1, 0)] {
			w := utf8.RuneCountInString(c) + 3
			if w < 6 {
				w = 6
			}
			for len(t.widths) <= i {
				t.widths = append(t.widths, 0)
			}
			if w > t.widths[i] {
				t.widths[i] = w
			}
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(c)))
		}
		b.WriteByte('\n')
	}
	t.rows = nil
	_, _ = io.WriteString(t.w, b.String())
}

// table is a meta.k8s.io Table as the server prints objects for kubectl.
type table struct {
	ColumnDefinitions []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Priority int    `json:"priority"`
	} `json:"columnDefinitions"`
	Rows []struct {
		Cells  []any `json:"cells"`
		Object obj   `json:"object"`
	} `json:"rows"`
}

// humanPrinter prints Tables as kubectl's human-readable printer does,
// remembering that it printed the header.
type humanPrinter struct {
	tw            *tableWriter
	wide          bool
	withNamespace bool
	showLabels    bool
	showKind      string // "configmap/" prefix for names, or ""
	noHeaders     bool
	watchEvents   bool
	printedHeader bool
	labelColumns  []string
}

func (h *humanPrinter) printTable(t *table, event string) {
	var cols []int
	for i, c := range t.ColumnDefinitions {
		if c.Priority == 0 || h.wide {
			cols = append(cols, i)
		}
	}
	if !h.printedHeader && !h.noHeaders {
		var hdr []string
		if h.watchEvents {
			hdr = append(hdr, fmt.Sprintf("%-8s", "EVENT"))
		}
		if h.withNamespace {
			hdr = append(hdr, "NAMESPACE")
		}
		for _, i := range cols {
			hdr = append(hdr, strings.ToUpper(t.ColumnDefinitions[i].Name))
		}
		for _, l := range h.labelColumns {
			hdr = append(hdr, strings.ToUpper(l[strings.LastIndex(l, "/")+1:]))
		}
		if h.showLabels {
			hdr = append(hdr, "LABELS")
		}
		h.tw.row(hdr)
	}
	h.printedHeader = true
	for _, r := range t.Rows {
		var cells []string
		if h.watchEvents {
			cells = append(cells, fmt.Sprintf("%-8s", event))
		}
		if h.withNamespace {
			cells = append(cells, nestedString(r.Object, "metadata", "namespace"))
		}
		for _, i := range cols {
			var c any
			if i < len(r.Cells) {
				c = r.Cells[i]
			}
			s := cellString(c)
			if t.ColumnDefinitions[i].Name == "Name" && h.showKind != "" {
				s = h.showKind + s
			}
			cells = append(cells, s)
		}
		labels, _ := nested(r.Object, "metadata", "labels").(obj)
		for _, l := range h.labelColumns {
			v, _ := labels[l].(string)
			cells = append(cells, v)
		}
		if h.showLabels {
			cells = append(cells, labelString(labels))
		}
		h.tw.row(cells)
	}
	h.tw.flush()
}

func cellString(c any) string {
	switch v := c.(type) {
	case nil:
		return "<none>"
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(c)
}

// labelString is kubectl's LABELS column: key=value sorted, or <none>.
func labelString(labels obj) string {
	if len(labels) == 0 {
		return "<none>"
	}
	var parts []string
	for _, k := range sortedKeys(labels) {
		v, _ := labels[k].(string)
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

// jsonpathPrinter is -o jsonpath=TEMPLATE: client-go's jsonpath, missing
// keys allowed, as kubectl runs it.
type jsonpathPrinter struct {
	jp *jsonpath.JSONPath
}

func newJSONPathPrinter(template string) (*jsonpathPrinter, error) {
	jp := jsonpath.New("out").AllowMissingKeys(true)
	if err := jp.Parse(template); err != nil {
		return nil, fmt.Errorf("error parsing jsonpath %s, %v", template, err)
	}
	return &jsonpathPrinter{jp: jp}, nil
}

func (p *jsonpathPrinter) print(w io.Writer, o any) error {
	var b bytes.Buffer
	if err := p.jp.Execute(&b, o); err != nil {
		return fmt.Errorf("error executing jsonpath %q: %v", "", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// relaxedJSONPath is kubectl's RelaxedJSONPathExpression for
// custom-columns and --sort-by: ".a.b", "a.b" or "{.a.b}".
func relaxedJSONPath(expr string) (string, error) {
	if strings.HasPrefix(expr, "{") && strings.HasSuffix(expr, "}") {
		return expr, nil
	}
	if expr == "" {
		return "", fmt.Errorf("jsonpath expression cannot be empty")
	}
	if !strings.HasPrefix(expr, ".") {
		expr = "." + expr
	}
	return "{" + expr + "}", nil
}

// customColumns is -o custom-columns=HEADER:PATH,...
type customColumns struct {
	headers []string
	paths   []*jsonpath.JSONPath
	tw      *tableWriter
	printed bool
	noHdr   bool
}

func newCustomColumns(spec string, w io.Writer, noHeaders bool) (*customColumns, error) {
	if spec == "" {
		return nil, fmt.Errorf("custom-columns format specified but no custom columns given")
	}
	cc := &customColumns{tw: newTableWriter(w), noHdr: noHeaders}
	for _, part := range strings.Split(spec, ",") {
		h, p, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", part)
		}
		expr, err := relaxedJSONPath(p)
		if err != nil {
			return nil, err
		}
		jp := jsonpath.New(h).AllowMissingKeys(true)
		if err := jp.Parse(expr); err != nil {
			return nil, err
		}
		cc.headers = append(cc.headers, h)
		cc.paths = append(cc.paths, jp)
	}
	return cc, nil
}

func (cc *customColumns) print(objs []obj) error {
	if !cc.printed && !cc.noHdr {
		cc.tw.row(cc.headers)
	}
	cc.printed = true
	for _, o := range objs {
		var cells []string
		for _, jp := range cc.paths {
			results, err := jp.FindResults(o)
			if err != nil {
				return err
			}
			var vals []string
			for _, rs := range results {
				for _, r := range rs {
					vals = append(vals, fmt.Sprint(r.Interface()))
				}
			}
			if len(vals) == 0 {
				cells = append(cells, "<none>")
			} else {
				cells = append(cells, strings.Join(vals, ","))
			}
		}
		cc.tw.row(cells)
	}
	cc.tw.flush()
	return nil
}

// sortObjects sorts by a --sort-by expression.
func sortObjects(objs []obj, expr string) error {
	e, err := relaxedJSONPath(expr)
	if err != nil {
		return err
	}
	jp := jsonpath.New("sort").AllowMissingKeys(true)
	if err := jp.Parse(e); err != nil {
		return err
	}
	keys := make([]any, len(objs))
	for i, o := range objs {
		rs, err := jp.FindResults(o)
		if err == nil && len(rs) > 0 && len(rs[0]) > 0 {
			keys[i] = rs[0][0].Interface()
		}
	}
	idx := make([]int, len(objs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return lessValue(keys[idx[a]], keys[idx[b]]) })
	sorted := make([]obj, len(objs))
	for i, j := range idx {
		sorted[i] = objs[j]
	}
	copy(objs, sorted)
	return nil
}

func lessValue(a, b any) bool {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return x < y
		}
	case float64:
		if y, ok := b.(float64); ok {
			return x < y
		}
	case string:
		if y, ok := b.(string); ok {
			return naturalLess(x, y)
		}
	}
	return a == nil && b != nil
}

// naturalLess orders strings as kubectl's --sort-by does: runs of digits
// compare as numbers, so resourceVersion "9" comes before "23".
func naturalLess(a, b string) bool {
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			i, j := 0, 0
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			x, y := strings.TrimLeft(a[:i], "0"), strings.TrimLeft(b[:j], "0")
			if len(x) != len(y) {
				return len(x) < len(y)
			}
			if x != y {
				return x < y
			}
			a, b = a[i:], b[j:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}
