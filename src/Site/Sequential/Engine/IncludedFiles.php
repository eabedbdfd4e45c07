<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

use Kiln\Site\Sequential\Declarations;

/**
 * Makes require_once and include_once run a file again on the next request, as under php-fpm, when the
 * file declares nothing (see Declarations): `require_once 'config.php'` sets its variables on every
 * request, not only on the worker's first. PHP remembers included files in EG(included_files) (embedded in
 * executor_globals right after the symbol table) for the life of the process under the CLI; after each
 * request, the files first included during it that declare nothing are removed from it. A file that
 * declares a function, class or constant stays: running it again would redeclare.
 *
 * Per request: two reads of the table's count; when the script differs from the last one, a look-up of it
 * and a removal of the last one if it declares nothing; the file list only when the request included more
 * files. Kiln's include.php is left in the table.
 * find() checks the offset: the count follows get_included_files(), an include adds one, a removal takes it
 * away again.
 *
 * @internal
 */
final class IncludedFiles
{
    /** sizeof(zend_array) on 64-bit: included_files follows symbol_table. */
    private const AFTER_SYMBOL_TABLE = 56;

    /** A pure script left in the table after its request (begin()). */
    private ?string $kept = null;

    /** The request's script was in the table when the request began (its include then added nothing). */
    private bool $scriptListed = false;

    /** See loadedBefore(). */
    private bool $loadedBefore = false;

    private function __construct(
        private readonly Native $native,
        private readonly \FFI\CData $table,
        private readonly \FFI\CData $count,
    ) {}

    public static function find(?ExecutorGlobals $executor): ?self
    {
        if ($executor === null) {
            return null;
        }
        try {
            $native = $executor->native;
            $address = $executor->base + $executor->symbolTable + self::AFTER_SYMBOL_TABLE;
            $files = new self($native, $native->cast('HashTable*', $address), $native->cast('uint32_t*', $address + ExecutorGlobals::COUNT));
            $before = $files->count();
            if ($before !== \count(get_included_files())) {
                return null;
            }
            $probe = __DIR__ . '/probe-included.php';
            include $probe;
            $after = $files->count();
            $files->forget([$probe]);
            return $after === $before + 1 && $files->count() === $before && !\in_array($probe, get_included_files(), true) ? $files : null;
        } catch (\Throwable) {
            return null;
        }
    }

    public function count(): int
    {
        return Native::int($this->count[0]);
    }

    /**
     * Before a request for $script: lets the script of the request before run again under require_once, when
     * it was another one that declares nothing. Returns the table's count, for settle().
     *
     * A pure script stays in the table after its own request (settle()): the next request for the same script
     * would add it again at once (PHP lists the running script, as get_included_files() shows under php-fpm),
     * so it is removed only when a request for another script comes, which saves a removal per request on a
     * site that serves the same script again and again.
     */
    public function begin(string $script): int
    {
        if ($this->kept !== null && $this->kept !== $script) {
            $this->forget([$this->kept]);
            $this->kept = null;
        }
        // The same pure script again: listed, no look-up. Else it may be (one that declares stays listed).
        $again = $this->kept === $script;
        $this->scriptListed = $again || $this->contains($script);
        $this->loadedBefore = !$again && $this->scriptListed;
        return $this->count();
    }

    /**
     * Whether the script of the request begin() was called for was in the table already, other than as the pure
     * script kept from the request before: a file an earlier request loaded, which may declare something.
     */
    public function loadedBefore(): bool
    {
        return $this->loadedBefore;
    }

    /**
     * After a request that started with $before files included (begin()): lets the pure new ones run again,
     * so that a later request's require_once of one of them runs it, as under php-fpm. The script itself,
     * when pure, is kept until a request for another script (see begin()).
     *
     * @param string $script the script the request ran
     */
    public function settle(int $before, string $script): void
    {
        $added = $this->count() - $before;
        if (!$this->scriptListed) {
            $added--; // the script's own include added it
        }
        if ($this->kept !== $script && !Declarations::inFile($script)) {
            $this->kept = $script;
        }
        if ($added <= 0) {
            return;
        }
        $pure = [];
        foreach (\array_slice(get_included_files(), $before) as $file) {
            if ($file !== $script && $file !== GlobalScope::INCLUDE && !Declarations::inFile($file)) {
                $pure[] = $file;
            }
        }
        $this->forget($pure);
    }

    private function contains(string $file): bool
    {
        return $this->native->ffi->zend_hash_str_find($this->table, $file, \strlen($file)) !== null; // @phpstan-ignore method.notFound (FFI)
    }

    /** @param list<string> $files */
    private function forget(array $files): void
    {
        foreach ($files as $file) {
            $this->native->ffi->zend_hash_str_del($this->table, $file, \strlen($file)); // @phpstan-ignore method.notFound (FFI)
        }
    }
}
