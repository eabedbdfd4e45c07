<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

/**
 * getenv() for a script in the worker, as under a web SAPI: php-fpm and php-cgi answer getenv('REQUEST_METHOD')
 * (and every other CGI meta-variable) from the request, the CLI only from the process environment. So the
 * request's variables are put into the worker's environment while its script runs and taken out after,
 * and a name the worker had before is given its own value back.
 *
 * Only the variables this request set are touched, so the cost is one putenv() per variable and request.
 */
final class ScriptEnvironment
{
    /** @var array<string, string|false> name => the worker's own value (false: it had none) */
    private array $saved = [];

    /** @param array<string, string> $variables the request's CGI meta-variables */
    public function apply(array $variables): void
    {
        foreach ($variables as $name => $value) {
            if (!isset($this->saved[$name])) {
                $this->saved[$name] = getenv($name, true);
            }
            putenv("$name=$value");
        }
    }

    /** Gives the worker its environment back. */
    public function restore(): void
    {
        foreach ($this->saved as $name => $value) {
            putenv($value === false ? $name : "$name=$value");
        }
        $this->saved = [];
    }
}
