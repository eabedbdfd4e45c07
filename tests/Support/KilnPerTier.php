<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * For a test class that runs its cases against the document root self::ROOT on several tiers: one Kiln per tier
 * (one worker), started when a case first asks for that tier and stopped after the class.
 */
trait KilnPerTier
{
    /** @var array<string, KilnProcess> by tier */
    private static array $servers = [];

    public static function tearDownAfterClass(): void
    {
        foreach (self::$servers as $server) {
            $server->stop();
        }
        self::$servers = [];
    }

    /**
     * The Kiln serving self::ROOT on $tier: `kiln serve ROOT --tier=TIER --workers=1`, or what $start starts.
     *
     * @param (\Closure(string $tier): KilnProcess)|null $start
     */
    private function server(string $tier, ?\Closure $start = null): KilnProcess
    {
        return self::$servers[$tier] ??= $start !== null ? $start($tier) : KilnProcess::start(self::ROOT, ["--tier=$tier", '--workers=1'], [], 20.0);
    }
}
