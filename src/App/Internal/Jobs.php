<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\Server\Background\AppBackground;

/**
 * @internal
 *
 * The app's named tasks and user processes (App::task(), App::process()), as the supervisor's background
 * processes find them once they loaded the app.
 */
final class Jobs implements AppBackground
{
    /** @var array<string, \Closure> */
    private array $tasks = [];

    /** @var array<string, \Closure(): mixed> */
    private array $processes = [];

    public function task(string $name, \Closure $fn): void
    {
        if (preg_match('/^[A-Za-z0-9._:-]{1,128}$/D', $name) !== 1) {
            throw new \ValueError("A task name is 1-128 characters of A-Z, a-z, 0-9, '.', '_', ':' or '-', got '$name'");
        }
        $this->tasks[$name] = $fn;
    }

    /** @param \Closure(): mixed $fn */
    public function process(string $name, \Closure $fn): void
    {
        if (preg_match('/^[A-Za-z0-9._-]{1,64}$/D', $name) !== 1) {
            throw new \ValueError("A process name is 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-', got '$name'");
        }
        if (isset($this->processes[$name])) {
            throw new \ValueError("A process named '$name' is already registered");
        }
        $this->processes[$name] = $fn;
    }

    public function processes(): array
    {
        return $this->processes;
    }

    public function namedTask(string $name): ?\Closure
    {
        return $this->tasks[$name] ?? null;
    }
}
