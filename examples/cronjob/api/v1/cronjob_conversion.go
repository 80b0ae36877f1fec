package v1

// Hub marks v1 as the hub of the CronJob versions: every other version
// converts to and from v1 (see package v2), and the webhooks of the kind are
// registered on v1.
func (*CronJob) Hub() {}
