package kube

import (
	"encoding/json"
	"testing"
)

// withConversion is widgetDefinition with spec.conversion as given (JSON).
func withConversion(conversion string) Object {
	crd := widgetDefinition("widgets", "Widget")
	var c any
	if err := json.Unmarshal([]byte(conversion), &c); err != nil {
		panic(err)
	}
	crd["spec"].(map[string]any)["conversion"] = c
	return crd
}

const invalidWidgets = `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: `

// TestADefinitionConvertedByAWebhookIsRefused: rvplay calls no
// conversion webhooks, so a definition kube would serve through one is
// refused in kube's words for a strategy the server does not support,
// never served as if its strategy were None; one kube itself refuses
// gets kube's errors alone (recorded from kube-apiserver v1.36.3 by
// test/kubediff's TestRecordWebhookGolden); strategy None may not carry a
// webhook's settings.
func TestADefinitionConvertedByAWebhookIsRefused(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ rule, conversion, want string }{
		{"a webhook kube would call", `{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://127.0.0.1:1/convert"}}}`,
			`spec.conversion.strategy: Unsupported value: "Webhook": supported values: "None" (this server calls no conversion webhooks: a request to wherever a definition points is not a classroom's to send)`},
		{"a webhook in the cluster, by its service", `{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1beta1","v1"],"clientConfig":{"service":{"namespace":"default","name":"converter","path":"/convert"}}}}`,
			`spec.conversion.strategy: Unsupported value: "Webhook": supported values: "None" (this server calls no conversion webhooks: a request to wherever a definition points is not a classroom's to send)`},
		{"a webhook over http (kube's own refusal)", `{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"http://127.0.0.1:1/convert"}}}`,
			`spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`},
		{"a webhook without its settings (kube's own refusal)", `{"strategy":"Webhook"}`,
			`[spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook, spec.conversion.conversionReviewVersions: Required value]`},
		{"a URL with user, query and fragment, and review versions kube does not know", `{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v9","v9"],"clientConfig":{"url":"https://me@host/convert?x=1#top"}}}`,
			`[spec.conversion.webhookClientConfig.url: Invalid value: "me": user information is not permitted in the URL, ` +
				`spec.conversion.webhookClientConfig.url: Invalid value: "top": fragments are not permitted in the URL, ` +
				`spec.conversion.webhookClientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL, ` +
				`spec.conversion.conversionReviewVersions[1]: Invalid value: "v9": duplicate version, ` +
				`spec.conversion.conversionReviewVersions: Invalid value: ["v9","v9"]: must include at least one of v1, v1beta1]`},
		{"a service without a name, on no port, at a bad path", `{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"service":{"namespace":"default","port":0,"path":"/a//B"}}}}`,
			`[spec.conversion.webhookClientConfig.service.name: Required value, ` +
				`spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive, ` +
				`spec.conversion.webhookClientConfig.service.path: Invalid value: "/a//B": segment[1] may not be empty, ` +
				`spec.conversion.webhookClientConfig.service.path: Invalid value: "/a//B": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`},
		{"both a URL and a service", `{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://host/","service":{"namespace":"default","name":"converter"}}}}`,
			`spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required`},
		{"strategy None with a webhook's settings", `{"strategy":"None","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://host/"}}}`,
			`[spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook, spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook]`},
		{"a strategy kube does not know", `{"strategy":"Magic"}`,
			`spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"`},
	} {
		t.Run(c.rule, func(t *testing.T) {
			_, err := f.s.Create(f.ctx, definitions, "", withConversion(c.conversion), WriteOptions{})
			wantStatus(t, err, 422, ReasonInvalid, invalidWidgets+c.want)
		})
	}
	f.create(t, definitions, "", withConversion(`{"strategy":"None"}`))
}
