<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Site\Sequential\Engine\CommandLine;
use Kiln\Site\Sequential\Engine\CwdWatch;
use Kiln\Site\Sequential\Engine\ExecutorGlobals;
use Kiln\Site\Sequential\Engine\GlobalScope;
use Kiln\Site\Sequential\Engine\IncludedFiles;
use Kiln\Site\Sequential\Engine\InputBody;
use Kiln\Site\Sequential\Engine\RequestMethod;
use Kiln\Site\Sequential\Engine\SapiGlobals;
use Kiln\Site\Sequential\Engine\SavedUmask;
use Kiln\Site\Sequential\Engine\SessionId;
use Kiln\Site\Sequential\Engine\ShutdownWatch;
use Kiln\Site\Sequential\Engine\UploadTable;

/**
 * What a process needs to run classic scripts in place, found once per process (boot() probes the engine:
 * a few ms) and shared by every request: the header hook, the per-request state and output, and each
 * engine feature that passed its self-test (null where it did not; the log says what is missing and what
 * that means).
 *
 * @api reused by the fork tier
 */
final class Runtime
{
    private function __construct(
        public readonly RequestState $state,
        public readonly ScriptOutput $output,
        public readonly IniReset $ini,
        public readonly GlobalScope $scope,
        /** is_uploaded_file() / move_uploaded_file() for this request's uploads */
        public readonly ?UploadTable $uploads,
        /** php://input */
        public readonly ?InputBody $input,
        /** register_shutdown_function() seen */
        public readonly ?ShutdownWatch $shutdowns,
        /** the session id forgotten between requests */
        public readonly ?SessionId $sessionId = null,
        /** the request method PHP itself reads (Location: 303 after a POST) */
        public readonly ?RequestMethod $method = null,
        /** require_once runs files that declare nothing again on every request */
        public readonly ?IncludedFiles $included = null,
        /** getopt() returns false, as under a web SAPI (CommandLine) */
        public readonly bool $noCommandLine = false,
    ) {}

    /** Runs (and caches, for this process and its forks) the probes that do not depend on a request. */
    public static function probe(): void
    {
        ExecutorGlobals::find();
        $address = SapiGlobals::find()?->headersSent();
        if ($address !== null) {
            // Whatever this process printed must not make session_id() refuse to work in the probe.
            $byte = SapiGlobals::find()?->native->ffi->cast('unsigned char*', $address);
            \assert($byte instanceof \FFI\CData);
            $byte[0] = 0;
        }
        SessionId::find();
        ShutdownWatch::find();
    }

    /**
     * @param \Closure(string, string): void $log level, message
     * @throws \Error when headers cannot be kept (no FFI): the tier must not run
     */
    public static function boot(\Closure $log): self
    {
        HeaderHook::install();
        self::probe(); // at once when SequentialRunner::prepareProcess() ran before the fork
        $executor = ExecutorGlobals::find();
        $sapi = SapiGlobals::find();
        $output = ScriptOutput::create();
        $output->resetHeadersSent(); // whatever the worker printed before must not hold back the probes below
        header_remove();
        $sessionId = SessionId::find();
        $runtime = new self(
            new RequestState($sessionId, SavedUmask::find(), CwdWatch::find()),
            $output,
            IniReset::fromCurrent($executor),
            GlobalScope::create($executor),
            UploadTable::probe($sapi),
            InputBody::probe($sapi),
            ShutdownWatch::find(),
            $sessionId,
            RequestMethod::find($sapi),
            IncludedFiles::find($executor),
            CommandLine::hide(),
        );
        self::defineHeaderFunctions();
        foreach ($runtime->missing() as $feature => $consequence) {
            $log('warning', "$feature is not available here: $consequence");
        }
        return $runtime;
    }

    /** getallheaders() and apache_request_headers(): a web SAPI's PHP has them, the CLI does not. */
    public static function defineHeaderFunctions(): void
    {
        if (!\function_exists('getallheaders') || !\function_exists('apache_request_headers')) {
            require_once __DIR__ . '/getallheaders.php';
        }
    }

    /** @return array<string, string> feature => what scripts see without it */
    public function missing(): array
    {
        $missing = [];
        if (!$this->scope->isGlobal()) {
            $missing['global scope'] = 'scripts run in a function scope; their top-level variables are not globals';
        }
        if ($this->uploads === null) {
            $missing['upload registry'] = 'is_uploaded_file() and move_uploaded_file() refuse uploads; use rename() on $_FILES[…][\'tmp_name\']';
        }
        if ($this->input === null) {
            $missing['php://input'] = 'php://input reads empty';
        }
        if ($this->shutdowns === null) {
            $missing['shutdown function watch'] = 'functions registered with register_shutdown_function() run only when the worker exits';
        }
        if (!$this->ini->isNative()) {
            $changed = $this->ini->changedAtStart();
            $them = \count($changed) === 1 ? 'it' : 'them';
            $missing['native ini reset'] = 'ini settings are compared after every request (slower)' . ($changed === [] ? '' : ': '
                . implode(', ', $changed) . " changed at run time before the worker started (PHP's reset would take $them back); "
                . "set $them on PHP's command line (php -d) or in php.ini instead");
        }
        if ($this->sessionId === null && \extension_loaded('session')) {
            $missing['session id reset'] = 'the session cookie is handed to session_id() before each script, so session_id() is not \'\' before session_start()';
        }
        if ($this->included === null) {
            $missing['included files reset'] = 'a file loaded with require_once or include_once runs once per worker, not once per request';
        }
        if ($this->method === null) {
            $missing['request method'] = 'header(\'Location: …\') after a POST answers 302, not 303 as under php-fpm';
        }
        if (!$this->noCommandLine) {
            $missing['command line hidden'] = 'getopt() returns the worker\'s (empty) options where a web server\'s PHP returns false, '
                . 'so a script that refuses web requests by that test runs';
        }
        if (!$this->output->isComplete()) {
            $missing['standard output capture'] = 'a script that ends every output buffer loses what it prints next';
        }
        return $missing;
    }
}
