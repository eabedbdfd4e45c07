<?php

declare(strict_types=1);

namespace Kiln\Server\Background;

/**
 * What an app gives the supervisor's background processes, loaded afresh in each of them (so a reload
 * brings new code): its user processes and its named tasks. The App implements it; a document root has none.
 */
interface AppBackground
{
    /** @return array<string, \Closure(): mixed> user processes by name (App::process()) */
    public function processes(): array;

    /** A task registered by name (App::task()); null: no such name. */
    public function namedTask(string $name): ?\Closure;
}
