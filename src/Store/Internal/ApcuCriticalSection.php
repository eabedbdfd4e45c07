<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

/**
 * Runs a short step while this process holds APCu's write lock, so no other process writes any APCu entry
 * meanwhile. apcu_entry() holds that lock while its generator runs, and APCu calls made inside it do not
 * lock again; the generator always throws, so apcu_entry() stores nothing under its key.
 * The step MUST be quick, MUST NOT suspend the Fiber and MUST NOT do I/O: every APCu writer of the node
 * waits for it.
 *
 * @internal
 */
final class ApcuCriticalSection
{
    private const KEY = "kiln.store\0critical";

    /**
     * @template T
     * @param \Closure(): T $step
     * @return T
     */
    public static function run(\Closure $step): mixed
    {
        $done = new \Exception('the step is done'); // a marker, never seen outside
        $result = null;
        try {
            apcu_entry(self::KEY, static function () use ($step, &$result, $done): never {
                $result = $step();
                throw $done;
            });
        } catch (\Exception $caught) {
            if ($caught !== $done) {
                throw $caught;
            }
        }
        /** @var T $result */
        return $result;
    }
}
