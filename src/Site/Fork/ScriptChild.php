<?php

declare(strict_types=1);

namespace Kiln\Site\Fork;

use Kiln\Isolation\Fork\ForkChild;
use Kiln\Site\Fork\Internal\ChildGlobals;
use Kiln\Site\Fork\Internal\ChildOutput;
use Kiln\Site\Sequential\AuthVariables;
use Kiln\Site\Sequential\CodeRevalidation;
use Kiln\Site\Sequential\Engine\CommandLine;
use Kiln\Site\Sequential\Engine\InputBody;
use Kiln\Site\Sequential\Engine\SapiGlobals;
use Kiln\Site\Sequential\HeaderHook;
use Kiln\Site\Sequential\Runtime;

/**
 * What a fork server's child does for the fork tier: builds the superglobals from the CGI meta-variables
 * and the body (with the PHP_AUTH_* of an Authorization header: AuthVariables), keeps header()/setcookie()
 * working under the CLI (HeaderHook, installed once in the fork server so every child inherits it, as are
 * getallheaders() and apache_request_headers()), gives php://input the body (InputBody, probed once in the
 * fork server), changes to the script's directory, and has the server include the script at the global scope.
 * Its output becomes a CGI response on the connection (ChildOutput); exit(), fatal errors (500) and
 * shutdown functions behave as under php-fpm.
 */
final class ScriptChild implements ForkChild
{
    /** @var (\Closure(int): never)|null */
    private ?\Closure $quickExit = null;

    /** php://input's stream (null: not available, php://input reads empty). */
    private ?InputBody $input = null;

    /** Edited scripts noticed by opcache (false: opcache off or not checking timestamps; null: not looked yet). */
    private CodeRevalidation|false|null $revalidation = null;

    /**
     * Ends the response from its destructor when the output's shutdown function was skipped. Static: the fork
     * server (and this object) are let go before the script runs; this must live until PHP's shutdown.
     */
    private static ?object $fallback = null; // @phpstan-ignore property.onlyWritten (held for its destructor)

    public function prepare(): void
    {
        try {
            $libc = \FFI::cdef('void _exit(int status);');
            $this->quickExit = static function (int $code) use ($libc): never {
                $libc->_exit($code); // @phpstan-ignore method.notFound (FFI)
                exit($code);
            };
        } catch (\Throwable) {
            $this->quickExit = null; // no FFI: children end through PHP's full shutdown (slower)
        }
        $reason = HeaderHook::unsupportedReason();
        if ($reason === null) {
            HeaderHook::install();
        } else {
            \fwrite(\STDERR, "Kiln fork: header() and setcookie() are lost: $reason\n");
        }
        $this->input = InputBody::probe(SapiGlobals::find());
        if ($this->input === null) {
            \fwrite(\STDERR, "Kiln fork: php://input reads empty: this PHP build does not let Kiln fill it\n");
        }
        if (!CommandLine::hide()) {
            \fwrite(\STDERR, "Kiln fork: getopt() returns the server's (empty) options where a web server's PHP returns false, "
                . "so a script that refuses web requests by that test runs\n");
        }
        Runtime::defineHeaderFunctions();
        \ini_set('display_errors', '0');
        \ini_set('log_errors', '1');
        \ini_set('html_errors', '0');
    }

    /**
     * The fork server is a CLI process too: opcache would never check a cached script again, so the children
     * it forks would run an edited script's old code (see CodeRevalidation).
     */
    public function beforeFork(array $params): void
    {
        if ($this->revalidation === false) {
            return;
        }
        $this->revalidation ??= CodeRevalidation::forThisProcess() ?? false;
        if ($this->revalidation !== false) {
            $this->revalidation->check(\microtime(true));
        }
    }

    public function handle(array $params, mixed $body): ?string
    {
        $sink = \fopen('php://fd/1', 'wb');
        if ($sink === false) {
            exit(70);
        }
        \http_response_code(200); // as under a web SAPI (the CLI has none until one is set)
        $globals = new ChildGlobals($this->input);
        $globals->install($params, $body);
        // PHP's own additions to $_SERVER (not getenv()'s, so after install() gave getenv() the params).
        foreach (AuthVariables::of($params['HTTP_AUTHORIZATION'] ?? null) as $name => $value) {
            $_SERVER[$name] = $value;
        }
        $input = $this->quickExit === null ? null : $this->input;
        $cleanUp = static function () use ($globals, $input): void {
            $globals->cleanUp();
            // PHP's own shutdown closes php://input's stream (removing the file a large body spilled to); _exit() skips it.
            $input?->release();
        };
        $output = new ChildOutput($sink, $this->quickExit, $cleanUp, measured: ($params['REQUEST_METHOD'] ?? '') !== 'HEAD');
        $output->start();
        // Registered from a shutdown function, so it runs after the script's own shutdown functions. One of
        // those that calls exit() makes PHP skip the rest; the destructors that run next do not skip this one.
        \register_shutdown_function(static function () use ($output): void {
            \register_shutdown_function($output->shutdown(...));
        });
        self::$fallback = new class ($output->shutdown(...)) {
            public function __construct(private readonly \Closure $shutdown) {}

            public function __destruct()
            {
                ($this->shutdown)();
            }
        };
        $script = $params['SCRIPT_FILENAME'] ?? '';
        @\chdir(\dirname($script));

        return $script === '' ? null : $script;
    }
}
