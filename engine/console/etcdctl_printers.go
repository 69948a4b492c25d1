package console

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// jsonPrinter is etcdctl -w json: encoding/json of etcd's Go response
// structs, one line per response.
type jsonPrinter struct{ w io.Writer }

func (p *jsonPrinter) print(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintln(p.w, err)
		return exitError
	}
	fmt.Fprintln(p.w, string(b))
	return 0
}

func (p *jsonPrinter) get(r *rangeResponse) int       { return p.print(r) }
func (p *jsonPrinter) put(r *putResponse) int         { return p.print(r) }
func (p *jsonPrinter) del(r *deleteRangeResponse) int { return p.print(r) }
func (p *jsonPrinter) txn(r *txnResponse) int         { return p.print(r) }
func (p *jsonPrinter) status(eps []epStatus) int      { return p.print(eps) }

func (p *jsonPrinter) watch(r *watchResponse) {
	cw := clientWatchResponse{Events: r.Events, CompactRevision: int64(r.CompactRevision), Canceled: r.Canceled, Created: r.Created}
	if r.Header != nil {
		cw.Header = *r.Header
	}
	p.print(cw)
}

// fieldsPrinter is etcdctl -w fields: one "Name" : value line per field.
type fieldsPrinter struct{ w io.Writer }

func (p *fieldsPrinter) hdr(h *responseHeader) {
	if h == nil {
		h = &responseHeader{}
	}
	fmt.Fprintln(p.w, `"ClusterID" :`, uint64(h.ClusterID))
	fmt.Fprintln(p.w, `"MemberID" :`, uint64(h.MemberID))
	fmt.Fprintln(p.w, `"Revision" :`, int64(h.Revision))
	fmt.Fprintln(p.w, `"RaftTerm" :`, uint64(h.RaftTerm))
}

func (p *fieldsPrinter) kv(pfx string, kv *keyValue) {
	fmt.Fprintf(p.w, "\"%sKey\" : %q\n", pfx, string(kv.Key))
	fmt.Fprintf(p.w, "\"%sCreateRevision\" : %d\n", pfx, kv.CreateRevision)
	fmt.Fprintf(p.w, "\"%sModRevision\" : %d\n", pfx, kv.ModRevision)
	fmt.Fprintf(p.w, "\"%sVersion\" : %d\n", pfx, kv.Version)
	fmt.Fprintf(p.w, "\"%sValue\" : %q\n", pfx, string(kv.Value))
	fmt.Fprintf(p.w, "\"%sLease\" : %d\n", pfx, kv.Lease)
}

func (p *fieldsPrinter) get(r *rangeResponse) int {
	p.hdr(r.Header)
	for _, kv := range r.Kvs {
		p.kv("", kv)
	}
	fmt.Fprintln(p.w, `"More" :`, r.More)
	fmt.Fprintln(p.w, `"Count" :`, int64(r.Count))
	return 0
}

func (p *fieldsPrinter) put(r *putResponse) int {
	p.hdr(r.Header)
	if r.PrevKv != nil {
		p.kv("Prev", r.PrevKv)
	}
	return 0
}

func (p *fieldsPrinter) del(r *deleteRangeResponse) int {
	p.hdr(r.Header)
	fmt.Fprintln(p.w, `"Deleted" :`, int64(r.Deleted))
	for _, kv := range r.PrevKvs {
		p.kv("Prev", kv)
	}
	return 0
}

func (p *fieldsPrinter) txn(r *txnResponse) int {
	p.hdr(r.Header)
	fmt.Fprintln(p.w, `"Succeeded" :`, r.Succeeded)
	for _, op := range r.Responses {
		switch {
		case op.ResponseDeleteRange != nil:
			p.del(op.ResponseDeleteRange)
		case op.ResponsePut != nil:
			p.put(op.ResponsePut)
		case op.ResponseRange != nil:
			p.get(op.ResponseRange)
		default:
			fmt.Fprintf(p.w, "\"Unknown\" : %q\n", fmt.Sprintf("%+v", op))
		}
	}
	return 0
}

func (p *fieldsPrinter) watch(r *watchResponse) {
	p.hdr(r.Header)
	for _, ev := range r.Events {
		fmt.Fprintln(p.w, `"Type" :`, ev.Type)
		if ev.PrevKv != nil {
			p.kv("Prev", ev.PrevKv)
		}
		if ev.Kv == nil {
			ev.Kv = &keyValue{}
		}
		p.kv("", ev.Kv)
	}
}

func (p *fieldsPrinter) status(eps []epStatus) int {
	for _, ep := range eps {
		r := ep.Resp
		p.hdr(r.Header)
		fmt.Fprintf(p.w, "\"Version\" : %q\n", r.Version)
		fmt.Fprintln(p.w, `"DBSize" :`, int64(r.DbSize))
		fmt.Fprintln(p.w, `"Leader" :`, uint64(r.Leader))
		fmt.Fprintln(p.w, `"IsLearner" :`, r.IsLearner)
		fmt.Fprintln(p.w, `"RaftIndex" :`, uint64(r.RaftIndex))
		fmt.Fprintln(p.w, `"RaftTerm" :`, uint64(r.RaftTerm))
		fmt.Fprintln(p.w, `"RaftAppliedIndex" :`, uint64(r.RaftAppliedIndex))
		errs := r.Errors
		if errs == nil {
			errs = []string{}
		}
		fmt.Fprintln(p.w, `"Errors" :`, errs)
		fmt.Fprintf(p.w, "\"Endpoint\" : %q\n", ep.Ep)
		fmt.Fprintln(p.w)
	}
	return 0
}

// tablePrinter is etcdctl -w table, which only the cluster commands
// support: a bordered table, headers centred, cells aligned right.
type tablePrinter struct{ w, errw io.Writer }

func (p *tablePrinter) unsupported() int {
	fmt.Fprintln(p.errw, "Error: table not supported as output format")
	return exitBadFeature
}

func (p *tablePrinter) get(*rangeResponse) int       { return p.unsupported() }
func (p *tablePrinter) put(*putResponse) int         { return p.unsupported() }
func (p *tablePrinter) del(*deleteRangeResponse) int { return p.unsupported() }
func (p *tablePrinter) txn(*txnResponse) int         { return p.unsupported() }
func (p *tablePrinter) watch(*watchResponse)         { p.unsupported() }

func (p *tablePrinter) status(eps []epStatus) int {
	header := make([]string, len(endpointStatusHeader))
	for i, h := range endpointStatusHeader {
		header[i] = strings.ToUpper(h)
	}
	fmt.Fprint(p.w, borderedTable(header, endpointStatusRows(eps)))
	return 0
}

// borderedTable renders what olekukonko/tablewriter renders with a header
// and right alignment.
func borderedTable(header []string, rows [][]string) string {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); n > widths[i] {
				widths[i] = n
			}
		}
	}
	var b strings.Builder
	border := func() {
		b.WriteByte('+')
		for _, w := range widths {
			b.WriteString(strings.Repeat("-", w+2))
			b.WriteByte('+')
		}
		b.WriteByte('\n')
	}
	border()
	b.WriteByte('|')
	for i, h := range header {
		pad := widths[i] - utf8.RuneCountInString(h)
		left := pad / 2
		b.WriteString(" " + strings.Repeat(" ", left) + h + strings.Repeat(" ", pad-left) + " |")
	}
	b.WriteByte('\n')
	border()
	for _, r := range rows {
		b.WriteByte('|')
		for i, c := range r {
			b.WriteString(" " + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)) + c + " |")
		}
		b.WriteByte('\n')
	}
	border()
	return b.String()
}
