# Kiln: `make serve` runs the example app, `make test` runs the whole suite. Both install what is missing.
PHP ?= php

.PHONY: serve test unit lint analyse format deps deps-run bench

serve: deps-run
	$(PHP) bin/kiln serve examples/hello

test: deps
	$(PHP) -d apc.enable_cli=1 vendor/bin/phpunit
	@scripts/install-apps.sh
	$(PHP) vendor/bin/phpunit -c tests/Apps/phpunit.xml
	$(PHP) vendor/bin/phpstan analyse --no-progress --memory-limit=1G
	$(PHP) vendor/bin/php-cs-fixer check --diff

unit: deps
	$(PHP) -d apc.enable_cli=1 vendor/bin/phpunit --testsuite unit

analyse: deps
	$(PHP) vendor/bin/phpstan analyse --memory-limit=1G

format: deps
	$(PHP) vendor/bin/php-cs-fixer fix

deps:
	@scripts/install-deps.sh dev

deps-run:
	@scripts/install-deps.sh run

bench: deps-run
	bench/run
	bench/run ws

# Real applications from Debian's packages (WordPress, DokuWiki, ...) walked on Kiln's tiers and on Apache mod_php
# in the same run; installs what is missing first and rewrites docs/apps.md from the results. `test` runs the same
# group without rewriting docs/apps.md.
.PHONY: test-apps
test-apps: deps
	@scripts/install-apps.sh
	KILN_APPS_MATRIX=docs/apps.md $(PHP) vendor/bin/phpunit -c tests/Apps/phpunit.xml
