package kube

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// validateConversion is kube's validateCustomResourceConversion on a
// definition's spec.conversion (its errors at the internal type's paths,
// spec.conversion.webhookClientConfig and conversionReviewVersions, as
// kube's are), then rvplay's refusal of strategy Webhook.
//
// rvplay calls no conversion webhooks: converting through one is a
// request to wherever the definition points, which a classroom server
// must not send for any student (an SSRF). Rather than serve such a
// definition as if its strategy were None (objects of every version the
// same but for their apiVersion, which a webhook would not give), a
// definition whose conversion kube would accept with a webhook is
// refused, in kube's words for a strategy a server does not support.
func validateConversion(spec map[string]any) []FieldError {
	conv, ok := spec["conversion"].(map[string]any)
	if !ok {
		return nil
	}
	const path = "spec.conversion"
	var errs []FieldError
	add := func(typ, field string, value any, detail string) {
		errs = append(errs, FieldError{Type: typ, Field: path + field, Value: value, Detail: detail})
	}
	webhook, _ := conv["webhook"].(map[string]any)
	cc, hasConfig := webhook["clientConfig"].(map[string]any)
	reviews, hasReviews := webhook["conversionReviewVersions"]
	switch strategy := str(conv, "strategy"); strategy {
	case "":
		add(CauseFieldValueRequired, ".strategy", nil, "")
	case "None":
		if hasConfig {
			add(CauseFieldValueForbidden, ".webhookClientConfig", nil, "should not be set when strategy is not set to Webhook")
		}
		if len(listOf(reviews)) > 0 {
			add(CauseFieldValueForbidden, ".conversionReviewVersions", nil, "should not be set when strategy is not set to Webhook")
		}
	case "Webhook":
		if !hasConfig {
			add(CauseFieldValueRequired, ".webhookClientConfig", nil, "required when strategy is set to Webhook")
		} else {
			u, hasURL := cc["url"].(string)
			svc, hasService := cc["service"].(map[string]any)
			switch {
			case hasURL == hasService:
				add(CauseFieldValueRequired, ".webhookClientConfig", nil, "exactly one of url or service is required")
			case hasURL:
				errs = append(errs, validateWebhookURL(path+".webhookClientConfig.url", u)...)
			default:
				errs = append(errs, validateWebhookService(path+".webhookClientConfig.service", svc)...)
			}
		}
		errs = append(errs, validateConversionReviewVersions(path+".conversionReviewVersions", reviews, hasReviews)...)
		if len(errs) == 0 {
			add(CauseFieldValueNotSupported, ".strategy", strategy,
				`supported values: "None" (this server calls no conversion webhooks: a request to wherever a definition points is not a classroom's to send)`)
		}
	default:
		add(CauseFieldValueNotSupported, ".strategy", strategy, `supported values: "None", "Webhook"`)
	}
	return errs
}

// validateWebhookURL is k8s.io/apiserver's webhook.ValidateWebhookURL
// with https forced, as for a conversion webhook.
func validateWebhookURL(field, raw string) []FieldError {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return []FieldError{{Type: CauseFieldValueRequired, Field: field, Detail: "url must be a valid URL: " + err.Error() + form}}
	}
	var errs []FieldError
	invalid := func(value, detail string) {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: field, Value: value, Detail: detail})
	}
	if u.Scheme != "https" {
		invalid(u.Scheme, "'https' is the only allowed URL scheme"+form)
	}
	if u.Host == "" {
		invalid(u.Host, "host must be specified"+form)
	}
	if u.User != nil {
		invalid(u.User.String(), "user information is not permitted in the URL")
	}
	if u.Fragment != "" {
		invalid(u.Fragment, "fragments are not permitted in the URL")
	}
	if u.RawQuery != "" {
		invalid(u.RawQuery, "query parameters are not permitted in the URL")
	}
	return errs
}

// validateWebhookService is webhook.ValidateWebhookService (a service's
// port defaulting to 443, as v1's defaults make it).
func validateWebhookService(field string, svc map[string]any) []FieldError {
	var errs []FieldError
	for _, k := range []string{"name", "namespace"} {
		if str(svc, k) == "" {
			errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: field + "." + k})
		}
	}
	port := int64(443)
	if p, ok := numberInt(svc["port"]); ok {
		port = p
	}
	if port < 1 || port > 65535 {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: field + ".port", Value: jsonInt(port), Detail: "port is not valid: must be between 1 and 65535, inclusive"})
	}
	p, hasPath := svc["path"].(string)
	if !hasPath || p == "/" || p == "" {
		return errs
	}
	pathErr := func(detail string) {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: field + ".path", Value: p, Detail: detail})
	}
	if p == "//" {
		pathErr("segment[0] may not be empty")
		return errs
	}
	if !strings.HasPrefix(p, "/") {
		pathErr("must start with a '/'")
	}
	check := strings.TrimSuffix(p[1:], "/")
	for i, step := range strings.Split(check, "/") {
		if step == "" {
			pathErr(fmt.Sprintf("segment[%d] may not be empty", i))
			continue
		}
		for _, msg := range IsDNS1123Subdomain(step) {
			pathErr(fmt.Sprintf("segment[%d]: %v", i, msg))
		}
	}
	return errs
}

// validateConversionReviewVersions is kube's, with a recognized version
// required (v1 or v1beta1), as on a create.
func validateConversionReviewVersions(field string, v any, present bool) []FieldError {
	versions := stringList(v)
	if !present || len(versions) == 0 {
		return []FieldError{{Type: CauseFieldValueRequired, Field: field}}
	}
	var errs []FieldError
	seen := map[string]bool{}
	accepted := false
	for i, s := range versions {
		f := field + "[" + strconv.Itoa(i) + "]"
		if seen[s] {
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: f, Value: s, Detail: "duplicate version"})
			continue
		}
		seen[s] = true
		for _, msg := range IsDNS1035Label(s) {
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: f, Value: s, Detail: msg})
		}
		accepted = accepted || s == "v1" || s == "v1beta1"
	}
	if !accepted {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: field, Value: v, Detail: "must include at least one of v1, v1beta1"})
	}
	return errs
}
