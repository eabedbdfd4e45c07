<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Site\Sequential\StartupIni;
use Kiln\Site\SiteConfig;
use PHPUnit\Framework\TestCase;

final class StartupIniTest extends TestCase
{
    public function testEveryNameIsASettingPhpTakesOnlyAtStartUp(): void
    {
        $known = ini_get_all(null, true);
        foreach (StartupIni::NAMES as $name) {
            if (!\array_key_exists($name, $known)) {
                continue; // an extension not loaded here
            }
            self::assertSame(0, $known[$name]['access'] & INI_USER, "$name can be set by ini_set(): it needs no start-up value");
        }
    }

    public function testOnlyTheListedSettingsOfASequentialSiteAreTaken(): void
    {
        $ini = ['post_max_size' => '16M', 'disable_functions' => 'exec', 'display_errors' => '1'];
        self::assertSame(['post_max_size' => '16M'], StartupIni::of(SiteConfig::create(tier: 'sequential', phpIni: $ini)));
    }

    public function testTheSequentialTiersWorkersGetTheFunctionJitWhenTheJitIsOnAndNoModeIsNamed(): void
    {
        $sequential = SiteConfig::create(tier: 'sequential');
        self::assertSame(['opcache.jit' => 'function'], StartupIni::jit($sequential, 'on'));
        self::assertSame([], StartupIni::jit($sequential, 'off'));
        self::assertSame([], StartupIni::jit($sequential, 'opcache'));
        self::assertSame(['opcache.jit' => 'tracing'], StartupIni::jit(SiteConfig::create(tier: 'sequential', phpIni: ['opcache.jit' => 'tracing']), 'on'));
        self::assertSame([], StartupIni::jit(SiteConfig::create(tier: 'fork'), 'on'));
    }

    public function testOtherTiersGiveTheirSettingsToTheirOwnPhp(): void
    {
        self::assertSame([], StartupIni::of(SiteConfig::create(tier: 'fork', phpIni: ['post_max_size' => '16M'])));
    }
}
