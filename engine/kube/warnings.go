package kube

import "context"

// Warnings are what a request's handling warns its client of from deep
// inside a write (a CEL rule ratcheted: customrules.go): kube's
// warning.Recorder, which the API layer turns into Warning headers (kube's
// WithWarningRecorder filter). Each text is kept once, in the order given,
// as kube's recorder keeps it: a write retried on a conflict warns again
// of the same thing. A build without a CEL evaluator (the browser's)
// warns with it that the rules were not evaluated (customrules.go).
type Warnings struct {
	// the request's context, which Warnings extends with itself: one
	// allocation a request rather than a value context and a recorder
	context.Context
	texts []string
}

type warningsKey struct{}

// WithWarnings returns a context whose AddWarning calls w records.
func WithWarnings(ctx context.Context) (context.Context, *Warnings) {
	w := &Warnings{Context: ctx}
	return w, w
}

// Value is the context's, with the recorder under its own key.
func (w *Warnings) Value(key any) any {
	if key == (warningsKey{}) {
		return w
	}
	return w.Context.Value(key)
}

// AddWarning records text on ctx's Warnings; without any, it is dropped
// (a write no client made, such as a controller's own).
func AddWarning(ctx context.Context, text string) {
	w, _ := ctx.Value(warningsKey{}).(*Warnings)
	if w == nil {
		return
	}
	for _, t := range w.texts {
		if t == text {
			return
		}
	}
	w.texts = append(w.texts, text)
}

// List is the texts recorded, in order.
func (w *Warnings) List() []string { return w.texts }
