<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\Body\BodyParser;
use Kiln\Http\ErrorResponse;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;
use Kiln\Server\WorkerLog;
use Kiln\Site\CgiParams;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;
use Kiln\Site\Sequential\Engine\Native;
use Kiln\Site\SiteConfig;

/**
 * The sequential tier: runs a script in the warm worker process, one at a time per worker, the way php-fpm
 * runs it in one of its children: at global scope, in its own directory, with native superglobals,
 * header()/setcookie()/sessions, php://input, is_uploaded_file(), a wall-clock time limit, and the
 * per-request reset PHP does at the end of a request wherever the engine allows it (see Engine\* for how,
 * and the docs for what cannot be reset: constants, functions, classes, static variables).
 *
 * Ways a request ends:
 * - the script returns (or throws: its exception handler runs, or PHP's fatal-error answer is given):
 *   the response is collected, the state reset, the worker serves on;
 * - exit()/die(): the process ends as PHP makes it; the fatal guard sends the response the script produced
 *   (after its shutdown functions ran, as PHP orders it) and the supervisor replaces the worker;
 * - the script registered a shutdown function: handled as an exit() at the end of the script, since only
 *   the end of the process runs it (the worker is replaced; see the docs);
 * - the script's own file declares a function or class without an existence check (Declarations::failsWhenRunAgain()):
 *   its response is sent as after exit(), and the worker is replaced, since a second run here would fail;
 * - a fatal error: a 500 from the fatal guard, the worker is replaced;
 * - the time limit: a 504 at once, the worker is replaced.
 */
final class SequentialRunner implements ScriptRunner
{
    /** A script that ran for less (seconds) may hold the loop turn's finished responses back (WriteBatch). */
    private const QUICK = 0.001;

    /** Most scripts remembered as quick (the list starts over when full). */
    private const MAX_QUICK = 4096;

    private ?Runtime $runtime = null;

    private bool $busy = false;

    /** @var list<Suspension> requests waiting for the running script to finish */
    private array $waiting = [];

    private readonly TimeLimit $timeLimit;

    /** Edited scripts noticed by opcache every revalidate_freq seconds (null when opcache is off). */
    private readonly ?CodeRevalidation $revalidation;

    private readonly ScriptEnvironment $environment;

    /** @var \Closure(Request, Script): array<string, string> */
    private readonly \Closure $params;

    /** @var \Closure(string, string): void */
    private readonly \Closure $log;

    /** The request and script running now (read by the exit and timeout callbacks, made once). */
    private ?Request $request = null;

    private ?Script $script = null;

    /** @var (\Closure(): Response)|null builds the response of a script that exited */
    private ?\Closure $onExit = null;

    /** @var (\Closure(): void)|null */
    private ?\Closure $onTimeout = null;

    /** @var (\Closure(string): void)|null logs a header ResponseCapture dropped */
    private ?\Closure $onRefused = null;

    /**
     * @var array<string, true> scripts whose last run took less than QUICK seconds: the responses of this loop
     *      turn may wait for them (WriteBatch); before any other script they are written first
     */
    private array $quick = [];

    /** Warns once per file about a bootstrap that declares and also sets up the request (made on first use). */
    private ?SetupOnce $setupOnce = null;

    /** What the running script threw out of its top level: it stopped half-way (null: it ran to its end). */
    private ?\Throwable $stopped = null;

    /** @var array<string, true> .htaccess php_value names already reported as not changeable at run time */
    private array $refusedIni = [];

    /** @var array<string, string>|null the --php-ini settings PHP accepts at run time (checked on first use) */
    private ?array $settings = null;

    /**
     * @param float $timeLimit seconds a script may run before its request gets a 504 (0: none)
     * @param array<string, string> $phpIni settings applied before each script (and reset after)
     * @param (\Closure(Request, Script): array<string, string>)|null $params the CGI meta-variables ($_SERVER);
     *        default CgiParams::build()
     * @param (\Closure(string, string): void)|null $log level, message; default the worker's error log
     * @param ?\SessionHandlerInterface $sessions where session_start() keeps sessions (App::sessions()); null:
     *        PHP's own session.save_handler
     */
    public function __construct(
        float $timeLimit = 30.0,
        private readonly array $phpIni = [],
        ?\Closure $params = null,
        ?\Closure $log = null,
        private readonly ?\SessionHandlerInterface $sessions = null,
    ) {
        $this->timeLimit = new TimeLimit($timeLimit);
        $this->revalidation = CodeRevalidation::forThisProcess();
        $this->environment = new ScriptEnvironment();
        $this->params = $params ?? static fn(Request $request, Script $script): array => CgiParams::build($request, $script);
        $this->log = $log ?? WorkerLog::write(...);
    }

    /**
     * The runner `--tier=sequential` makes: the site's time limit and --php-ini settings.
     *
     * @throws \Error when this PHP cannot keep headers under the CLI (no FFI): check unsupportedReason() at
     *                start-up to refuse to start instead
     */
    public static function fromConfig(SiteConfig $config): self
    {
        $reason = self::unsupportedReason();
        if ($reason !== null) {
            throw new \Error($reason);
        }
        return new self($config->timeLimit, $config->phpIni, sessions: $config->sessionHandler);
    }

    /** Why the sequential tier cannot run in this process (no FFI), or null. Check it at start-up. */
    public static function unsupportedReason(): ?string
    {
        return HeaderHook::unsupportedReason();
    }

    /**
     * Optional: finds the engine's fields once, in the process that forks the workers, so each worker (and
     * each replacement of a worker after exit()) starts without the ~15 ms of probing. Harmless anywhere.
     */
    public static function prepareProcess(): void
    {
        if (self::unsupportedReason() === null) {
            Runtime::probe();
        }
    }

    /**
     * Boots the worker's runtime now, if run() has not yet: it takes the worker's ini settings as every request's
     * starting point, so a caller that changes one around each script (DevReport pauses the cycle collector, an ini
     * change) boots first, or PHP's own reset would be given up for that setting.
     */
    public function boot(): void
    {
        $this->runtime ??= Runtime::boot($this->log);
    }

    public function run(Request $request, Script $script): Response
    {
        $runtime = $this->runtime ??= Runtime::boot($this->log);
        if ($this->busy) {
            // Only when a script suspended its Fiber (it awaited something): the next one waits its turn.
            $this->waiting[] = $suspension = Loop::getSuspension();
            $suspension->suspend();
        }
        $this->busy = true;
        return $this->executeAndRelease($runtime, $request, $script);
    }

    /**
     * execute(), then the next waiting script's turn. The finally blocks of this tier sit in small methods
     * of their own (this one, runScript()): PHP's tracing JIT compiles no trace through a finally block, so
     * the larger methods around them stay compiled (6–10% more requests per second, docs/design/010).
     */
    private function executeAndRelease(Runtime $runtime, Request $request, Script $script): Response
    {
        try {
            return $this->execute($runtime, $request, $script);
        } finally {
            $this->busy = false;
            [$this->request, $this->script] = [null, null];
            if ($this->waiting !== []) {
                array_shift($this->waiting)->resume();
            }
        }
    }

    /** The script itself, under the time limit; what it throws becomes its response (uncaught()). */
    private function runScript(Runtime $runtime, string $filename): void
    {
        try {
            $runtime->scope->run($filename);
        } catch (\Throwable $e) {
            $this->timeLimit->disarm();
            $this->stopped = $e;
            $this->uncaught($e);
        } finally {
            $this->timeLimit->disarm();
        }
    }

    private function execute(Runtime $runtime, Request $request, Script $script): Response
    {
        $time = microtime(true);
        $real = $script->realPath();
        if (!isset($this->quick[$real])) {
            $request->writeBatch()?->flush(); // a script that may be slow does not hold back the responses finished before it
        }
        $this->revalidation?->check($time);
        try {
            // The variables passed on, not kept here: install() then adds PHP_SELF and REQUEST_TIME(_FLOAT) in place.
            $uploads = Superglobals::install(($this->params)($request, $script), $request, $time);
        } catch (BadRequestBodyException $e) {
            return ErrorResponse::forRequest($request, $e->status(), $e->getMessage()); // nothing was set yet
        }
        $this->environment->apply($_SERVER);
        foreach ($uploads as $path) {
            $runtime->uploads?->add($path);
        }
        $this->fillInput($runtime, $request);
        // The protocol as php-fpm and php-cgi leave it (HTTP/1.0), whatever the client spoke: PHP then answers a
        // Location after a POST with 302, as they do, not the 303 it gives under HTTP/1.1 (mod_php).
        $runtime->method?->set($request->method(), '1.0');
        foreach ($this->settings ??= $this->checkSettings() as $name => $value) {
            ini_set($name, $value);
        }
        if ($this->sessions !== null) {
            $this->shareSessions($request);
        }
        foreach ($script->phpIni as $name => $value) { // .htaccess php_value: reset with the rest after the script
            if (@ini_set($name, $value) === false && !isset($this->refusedIni[$name]) && \ini_get($name) !== $value) {
                $this->refusedIni[$name] = true;
                ($this->log)('warning', "php_value $name in .htaccess ($script->scriptName) cannot be changed at run time: "
                    . "the sequential tier runs scripts in the worker, so set it for PHP itself (php -d $name=…, php.ini)");
            }
        }
        $runtime->output->begin();
        $runtime->state->begin(\dirname($script->filename)); // the folder as requested: a link's, not its target's
        [$this->request, $this->script] = [$request, $script];
        $onExit = $this->onExit ??= fn(): Response => $this->finish($runtime);
        $request->setLastResponse($onExit);
        $mark = $runtime->shutdowns?->mark();
        $included = $runtime->included?->begin($real) ?? 0;
        if ($runtime->included?->loadedBefore() === true && Declarations::failsWhenRunAgain($real)) {
            $this->refuseLoadedScript($request, $script); // exits: this worker cannot run it
        }
        $this->timeLimit->arm($this->onTimeout ??= function (): void {
            $this->timedOut();
        });
        $this->runScript($runtime, $real);
        if ($mark !== null && $runtime->shutdowns?->mark() !== $mark) {
            // Said by the supervisor as it starts the replacement (the isolated tier avoids it).
            $request->setLastResponse($onExit, "$script->scriptName registered a shutdown function: its request ends as "
                . 'exit() ends one, so the function runs before the response leaves');
            exit();
        }
        $request->clearLastResponse();
        $this->remember($real, microtime(true) - $time);
        $response = $this->finish($runtime);
        // A script that does not parse never ran: nothing of it is declared, and the worker serves on.
        $unparsed = $this->stopped instanceof \ParseError && $this->stopped->getFile() === $real;
        $halfDeclared = $this->stopped !== null && !$unparsed && $this->mayHaveDeclared($real, $included);
        $loaded = $runtime->included !== null && $runtime->included->count() > $included ? \array_slice(get_included_files(), $included) : [];
        $runtime->included?->settle($included, $real);
        if ($halfDeclared) {
            // The fatal guard sends the response; the supervisor's log says why the worker ends.
            $request->setLastResponse($response, "$script->scriptName stopped on an uncaught " . ($this->stopped ?? new \Error())::class
                . ' after running code that declares functions, classes or constants, so no request may meet them half-declared');
            $this->stopped = null;
            exit();
        }
        $this->stopped = null;
        if (!$unparsed && Declarations::failsWhenRunAgain($real)) {
            // The fatal guard sends the response; the supervisor's log says why the worker ends.
            $request->setLastResponse($response, "$script->scriptName declares a function or class without a function_exists() or class_exists() check, "
                . 'and a second run in this worker would be a fatal "Cannot redeclare"');
            exit();
        }
        if ($runtime->output->leftHeadersSent()) {
            ($this->log)('warning', "$script->scriptName ended Kiln's output buffer and PHP now counts its headers as sent: "
                . 'this worker is replaced after the response');
            $request->setLastResponse($response, "$script->scriptName left PHP counting its headers as sent"); // the fatal guard sends it
            exit();
        }
        if ($loaded !== []) { // this worker serves on: the files loaded once are missing from its later requests
            ($this->setupOnce ??= new SetupOnce($this->log))->check($loaded, $real);
        }
        return $response;
    }

    /**
     * Whether the script or a file it included during this request ($before: the included-files count when it
     * began) declares something: stopped half-way, it may have declared part of it, which the next run would
     * declare again. Without the included-files table every file the worker holds is looked at.
     */
    private function mayHaveDeclared(string $script, int $before): bool
    {
        if (Declarations::inFile($script)) {
            return true;
        }
        $kiln = \dirname(__DIR__, 2) . '/'; // Kiln's own classes, autoloaded on the way (ScriptTrace)
        foreach (\array_slice(get_included_files(), $before) as $file) {
            if ($file !== $script && !str_starts_with($file, $kiln) && Declarations::inFile($file)) {
                return true;
            }
        }
        return false;
    }

    /**
     * session_start() then keeps sessions where App routes do, under their cookie's rules: strict ids, HttpOnly,
     * SameSite=Lax, Secure over HTTPS. Set for each request: these settings are reset after every script.
     */
    private function shareSessions(Request $request): void
    {
        \assert($this->sessions !== null);
        session_set_save_handler($this->sessions, false);
        ini_set('session.use_strict_mode', '1');
        ini_set('session.cookie_httponly', '1');
        ini_set('session.cookie_samesite', 'Lax');
        ini_set('session.cookie_secure', $request->scheme() === 'https' ? '1' : '0');
    }

    private function remember(string $filename, float $took): void
    {
        if ($took >= self::QUICK) {
            unset($this->quick[$filename]);
        } elseif (!isset($this->quick[$filename])) {
            if (\count($this->quick) >= self::MAX_QUICK) {
                $this->quick = [];
            }
            $this->quick[$filename] = true;
        }
    }

    /** Collects the response, then resets what the script changed. */
    private function finish(Runtime $runtime): Response
    {
        try {
            // Still the script's code: destructors of its globals, its session handler.
            $runtime->state->unsetScriptGlobals();
            $runtime->state->closeSession();
        } catch (\Throwable $e) {
            $this->uncaught($e);
        }
        $body = $runtime->output->end();
        $failure = $runtime->output->takeFailure();
        if ($failure !== null) {
            // As PHP at the end of a request: a fatal "Uncaught …" (logged; a 500 without display_errors), and
            // nothing of the page, not even the message, since the buffers that would carry it are dropped.
            self::reportUncaught($failure);
            $body = '';
        }
        $response = ResponseCapture::build($body, $this->onRefused ??= fn(string $message) => ($this->log)('warning', $message));
        if ($this->request?->method() === 'HEAD') {
            // Nothing of it is sent, and what a script prints for HEAD (often nothing) is no measure of its GET: the
            // only Content-Length is one it set itself, as under Apache and on the other tiers.
            $response->setBody([]);
        }
        $runtime->state->end();
        $runtime->ini->reset();
        $runtime->state->resetZone(); // after the settings: a zone date.timezone gave goes with them
        $runtime->uploads?->clear();
        $this->environment->restore();
        return $response;
    }

    /**
     * The settings to apply before each script: those PHP lets a script change. The others (upload_max_filesize,
     * opcache.*…) can only be set when PHP starts: they are logged once and left out.
     *
     * @return array<string, string>
     */
    private function checkSettings(): array
    {
        $settings = [];
        foreach ($this->phpIni as $name => $value) {
            if (@ini_set($name, $value) === false) {
                if (\ini_get($name) === $value) {
                    continue; // PHP was started with it (php -d, php.ini): nothing to apply, nothing to warn about
                }
                ($this->log)('warning', "--php-ini $name cannot be changed at run time; the sequential tier runs in the "
                    . "worker, so set it for PHP itself (php -d $name=…, or php.ini)");
                continue;
            }
            $settings[$name] = $value;
        }
        return $settings;
    }

    /** php://input holds the body, except for multipart/form-data (as PHP: the body became $_POST and $_FILES). */
    private function fillInput(Runtime $runtime, Request $request): void
    {
        if ($runtime->input === null) {
            return;
        }
        if ($request->bodySize() === 0 || BodyParser::mediaType($request) === 'multipart/form-data') {
            $runtime->input->clear();
        } elseif ($request->isBodySpooled()) {
            $runtime->input->replaceFromStream($request->bodyStream());
        } else {
            $runtime->input->replace($request->body());
        }
    }

    /**
     * An exception the script did not catch: its exception handler gets it, as PHP would call it; without
     * one, PHP's answer to an uncaught exception (logged; shown with display_errors; 500 unless the script
     * set another status).
     */
    private function uncaught(\Throwable $error): void
    {
        $handler = RequestState::exceptionHandler();
        if ($handler !== null) {
            try {
                $handler($error);
                return;
            } catch (\Throwable $again) {
                $error = $again;
            }
        }
        echo self::reportUncaught($error);
    }

    /**
     * PHP's answer to an exception nothing caught, in its own words: logged, and returned for the page when
     * display_errors is on; else the status becomes 500 (unless the script set another) and nothing is shown.
     * A ParseError or CompileError is a "Parse error" or "Fatal error" with its message alone, no trace, as PHP
     * reports them (zend_exception_error()).
     */
    private static function reportUncaught(\Throwable $error): string
    {
        $compile = $error::class === \ParseError::class || $error::class === \CompileError::class;
        $label = $error::class === \ParseError::class ? 'Parse error' : 'Fatal error';
        $message = $compile ? $error->getMessage() : 'Uncaught ' . ScriptTrace::of($error) . "\n  thrown";
        [$file, $line] = [$error->getFile(), $error->getLine()];
        error_log("PHP $label:  $message in $file on line $line");
        $display = strtolower((string) ini_get('display_errors'));
        if (\in_array($display, ['1', 'on', 'yes', 'true', 'stdout'], true)) {
            return filter_var(ini_get('html_errors'), FILTER_VALIDATE_BOOL)
                ? "<br />\n<b>$label</b>:  " . nl2br(htmlspecialchars($message)) . " in <b>$file</b> on line <b>$line</b><br />\n"
                : "PHP $label:  $message in $file on line $line\n";
        }
        if (http_response_code() === 200) {
            http_response_code(500);
        }
        return '';
    }

    /**
     * The requested script is a file an earlier request in this worker loaded (an app's include file, asked for
     * directly) and declares a function or class without an existence check: run again here, it would stop on
     * a fatal "Cannot redeclare" and take the worker with it. It is not run: 503 with a Retry-After, and the
     * worker is replaced, so the next try runs it in a worker that has not loaded it.
     */
    private function refuseLoadedScript(Request $request, Script $script): never
    {
        ($this->log)('warning', "$script->scriptName: 503, not run: an earlier request in this worker "
            . 'loaded it, and it declares a function or class without a function_exists() or class_exists() check, so it '
            . 'cannot run again here; this worker is replaced (a request for an include file of an app, as scanners make)');
        $request->setLastResponse(
            ErrorResponse::forRequest($request, 503, '', ['Retry-After' => '1']),
            "$script->scriptName was requested after an earlier request loaded it, and it declares without a check",
            true,
        );
        exit();
    }

    /** The SIGALRM handler, inside the script: answer 504 now and end the process. */
    private function timedOut(): never
    {
        [$request, $script] = [$this->request, $this->script];
        \assert($request !== null && $script !== null);
        ($this->log)('error', "$script->scriptName ran past the time limit of {$this->timeLimit->seconds} s: "
            . 'answered 504, replacing this worker');
        $request->setLastResponse(
            ErrorResponse::forRequest($request, 504, "the script ran past its time limit of {$this->timeLimit->seconds} s"),
            "$script->scriptName ran past the time limit of {$this->timeLimit->seconds} s (--time-limit)",
            true,
        );
        TimeLimit::killAfter(5);
        // Not exit(): it unwinds the script from the instruction the signal stopped it at, and PHP 8.2 can crash
        // doing so (stopped between a call and the string interpolation that follows it, the unwinding frees the
        // interpolation's buffer it never made: SIGSEGV, and the client gets no answer). A fatal error ends the
        // request as PHP's max_execution_time does, by a jump to its end; the 504 set above is still sent.
        try {
            Native::get()?->fatalError("Maximum execution time of {$this->timeLimit->seconds} seconds exceeded by $script->scriptName (--time-limit)");
        } catch (\FFI\Exception) {
            // a build without the symbol: exit() below
        }
        exit(1);
    }
}
