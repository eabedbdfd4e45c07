<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use PHPUnit\Framework\TestCase;

/** Each .htaccess is parsed once and re-checked at most once a second; so are directories without one. */
final class ConfigCacheTest extends TestCase
{
    private float $now = 1000.0;

    private function clock(): \Closure
    {
        return fn(): float => $this->now;
    }

    public function testWithinASecondNothingIsAskedAgain(): void
    {
        $site = Fixtures::rules(['.htaccess' => 'Require all granted', 'a/b/f.txt' => 'x'], $fs, $this->clock());
        $site->forRequest(Fixtures::request('/a/b/f.txt'));
        $first = $fs->calls;
        self::assertGreaterThan(0, $first);
        for ($i = 0; $i < 5; $i++) {
            $this->now += 0.15;
            $site->forRequest(Fixtures::request('/a/b/f.txt'));
        }
        self::assertSame($first, $fs->calls, 'directories, the file and the missing .htaccess files are all cached');
    }

    public function testAChangedFileIsSeenAfterASecond(): void
    {
        $site = Fixtures::rules(['.htaccess' => 'Require all granted', 'f.txt' => 'x'], $fs, $this->clock());
        self::assertSame('serve /f.txt', Fixtures::describe($site->forRequest(Fixtures::request('/f.txt'))));
        $fs->write(Fixtures::ROOT . '/.htaccess', 'Require all denied');
        $this->now += 0.5;
        self::assertSame('serve /f.txt', Fixtures::describe($site->forRequest(Fixtures::request('/f.txt'))), 'not yet');
        $this->now += 0.6;
        self::assertSame('refuse 403', Fixtures::describe($site->forRequest(Fixtures::request('/f.txt'))));
    }

    public function testAnUnchangedFileIsNotReadAgain(): void
    {
        $site = Fixtures::rules(['.htaccess' => "Bogus 1\n", 'f.txt' => 'x'], $fs, $this->clock());
        $site->forRequest(Fixtures::request('/f.txt'));
        self::assertCount(1, $site->takeWarnings());
        $this->now += 5;
        $site->forRequest(Fixtures::request('/f.txt'));
        self::assertSame([], $site->takeWarnings(), 'warnings come once per parse');
        $fs->write(Fixtures::ROOT . '/.htaccess', "Bogus 2\n");
        $this->now += 5;
        $site->forRequest(Fixtures::request('/f.txt'));
        self::assertCount(1, $site->takeWarnings(), 'a changed file is parsed and reported again');
    }

    public function testANewAndARemovedFileAreSeen(): void
    {
        $site = Fixtures::rules(['sub/f.txt' => 'x'], $fs, $this->clock());
        self::assertSame('serve /sub/f.txt', Fixtures::describe($site->forRequest(Fixtures::request('/sub/f.txt'))));
        $fs->write(Fixtures::ROOT . '/sub/.htaccess', 'Require all denied');
        $this->now += 1.01;
        self::assertSame('refuse 403', Fixtures::describe($site->forRequest(Fixtures::request('/sub/f.txt'))));
        $fs->remove(Fixtures::ROOT . '/sub/.htaccess');
        $this->now += 1.01;
        self::assertSame('serve /sub/f.txt', Fixtures::describe($site->forRequest(Fixtures::request('/sub/f.txt'))));
    }

    public function testAClockGoingBackRechecks(): void
    {
        $site = Fixtures::rules(['f.txt' => 'x'], $fs, $this->clock());
        $site->forRequest(Fixtures::request('/f.txt'));
        $calls = $fs->calls;
        $this->now -= 10;
        $site->forRequest(Fixtures::request('/f.txt'));
        self::assertGreaterThan($calls, $fs->calls);
    }

    public function testAnUnreadableFileRefusesItsDirectory(): void
    {
        $site = Fixtures::rules(['sub/.htaccess' => 'Require all granted', 'sub/f' => 'x', 'g' => 'x'], $fs, $this->clock());
        $fs->unreadable[] = Fixtures::ROOT . '/sub/.htaccess';
        self::assertSame('refuse 403', Fixtures::describe($site->forRequest(Fixtures::request('/sub/f'))));
        self::assertSame('serve /g', Fixtures::describe($site->forRequest(Fixtures::request('/g'))));
        self::assertSame(['/srv/www/sub/.htaccess:0: .htaccess: cannot be read; everything under its directory is refused (403), as Apache does'], array_map('strval', $site->takeWarnings()));
    }
}
