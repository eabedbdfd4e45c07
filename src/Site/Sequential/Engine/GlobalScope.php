<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Includes a script at global scope from inside a function, as a web SAPI runs it: its top-level variables
 * are globals, `global $db` in its functions sees them, `$GLOBALS` lists them.
 *
 * PHP gives an included file the symbol table of the frame that includes it; a function's frame has its
 * own. So the script is included from a tiny file (include.php, no variables of its own) whose frame is
 * pointed, just before, at the global symbol table (EG(symbol_table)): enter() finds that frame through
 * EG(current_execute_data), checks it is the include.php frame (nested code with a symbol table, no
 * compiled variables, no function name), and swaps the pointer. Leaving a nested-code frame never frees its
 * table (a function frame would), so an exception or exit() unwinding through it is harmless.
 *
 * create() runs a probe script through it and checks that its variable became a global. When that fails
 * (no FFI, another engine layout) scripts still run, in the scope of a function: their top-level variables
 * are then not globals (see docs), and isGlobal() says so.
 *
 * @internal
 */
final class GlobalScope
{
    /** zend_execute_data: func, This.u1.type_info (call info), symbol_table, in 64-bit words. */
    private const FUNC = 3;
    private const CALL_INFO = 5;
    private const SYMBOL_TABLE = 7;

    /** ZEND_CALL_CODE | ZEND_CALL_HAS_SYMBOL_TABLE */
    private const NESTED_CODE_WITH_TABLE = (1 << 16) | (1 << 20);

    /** zend_op_array: function_name, last_var (number of compiled variables). */
    private const FUNCTION_NAME = 8;
    private const LAST_VAR = 76;

    /** The file the script is included from. */
    public const INCLUDE = __DIR__ . '/include.php';

    /** This file, which includes INCLUDE (ScriptTrace cuts a trace there). */
    public const FILE = __FILE__;

    /** @internal read by include.php: the file to include */
    public static string $script = '';

    /**
     * @internal read by include.php: EG() as 64-bit words (a dummy [0] without FFI), and the index of
     * EG(current_execute_data) in it
     * @var \FFI\CData|array{0}
     */
    public static \FFI\CData|array $executor = [0];

    /** @internal */
    public static int $slot = 0;

    private static ?self $current = null;

    private readonly \Closure $include;

    private readonly int $symbolTable;

    /** The op_array of include.php last checked (it stays the same while opcache keeps it). */
    private int $checked = 0;

    private int $entered = 0;

    /** The frame last entered, and its words (the next script, at the same depth, gets the same frame). */
    private int $frame = 0;

    private ?\FFI\CData $frameWords = null;

    private function __construct(private readonly ?ExecutorGlobals $executorGlobals)
    {
        $include = \Closure::bind(static function (): mixed {
            return include GlobalScope::INCLUDE; // (unscoped: not self::)
        }, null, null);
        \assert($include instanceof \Closure);
        $this->include = $include;
        if ($executorGlobals !== null) {
            self::$executor = $executorGlobals->native->words($executorGlobals->base);
            self::$slot = intdiv($executorGlobals->currentFrame, 8);
        }
        $this->symbolTable = $executorGlobals === null ? 0 : $executorGlobals->base + $executorGlobals->symbolTable;
    }

    public static function create(?ExecutorGlobals $executor): self
    {
        if ($executor !== null) {
            $scope = new self($executor);
            try {
                $saw = $scope->run(__DIR__ . '/probe-scope.php');
                if ($saw === true && $scope->entered === 1) {
                    return $scope;
                }
            } catch (\Throwable) {
                // fall back to a function's scope
            } finally {
                unset($GLOBALS['kilnGlobalScopeProbe']);
            }
            [self::$executor, self::$slot] = [[0], 0];
        }
        return new self(null);
    }

    public function isGlobal(): bool
    {
        return $this->executorGlobals !== null;
    }

    /** Includes $file at global scope; returns what the file returns. Exceptions pass through. */
    public function run(string $file): mixed
    {
        $previous = [self::$current, self::$script];
        self::$current = $this;
        self::$script = $file;
        $result = ($this->include)();
        // Not in a finally block (the tracing JIT compiles none): after an exception or exit() the statics keep
        // this run's values, which only the next run() reads, after setting its own.
        [self::$current, self::$script] = $previous;
        return $result;
    }

    /**
     * @internal called by include.php, first thing, with the address of its own frame
     */
    public static function enter(mixed $frame): void
    {
        $scope = self::$current;
        if ($scope === null || !\is_int($frame) || $frame === 0 || $scope->executorGlobals === null) {
            return;
        }
        // The frame is on the VM stack, its function in the heap: both readable, no mapping check needed.
        $native = $scope->executorGlobals->native;
        if ($frame !== $scope->frame || $scope->frameWords === null) {
            [$scope->frame, $scope->frameWords] = [$frame, $native->words($frame)];
        }
        $words = $scope->frameWords;
        $function = Native::int($words[self::FUNC]);
        if ((Native::int($words[self::CALL_INFO]) & self::NESTED_CODE_WITH_TABLE) !== self::NESTED_CODE_WITH_TABLE) {
            return; // not a file's frame with a symbol table: leave it alone
        }
        if ($function !== $scope->checked) {
            if ($native->u64($function + self::FUNCTION_NAME) !== 0 || $native->u32($function + self::LAST_VAR) !== 0) {
                return; // not top-level code without variables, as include.php is
            }
            $scope->checked = $function;
        }
        $words[self::SYMBOL_TABLE] = $scope->symbolTable;
        $scope->entered++;
    }

    /** @internal called by probe-scope.php */
    public static function probeSaw(): bool
    {
        return ($GLOBALS['kilnGlobalScopeProbe'] ?? null) === 'global';
    }
}
