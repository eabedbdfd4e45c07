<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site;

use Kiln\Site\SymlinkPolicy;
use Kiln\Tests\Support\PeerProcess;
use PHPUnit\Framework\TestCase;

/** The start-up warning for a document root whose own entries are links the policy refuses (Debian's layout). */
final class SymlinkPolicyTest extends TestCase
{
    private string $dir = '';

    protected function setUp(): void
    {
        $this->dir = PeerProcess::tempDir('kiln-symlink-policy');
        mkdir("$this->dir/share");
        mkdir("$this->dir/root");
        file_put_contents("$this->dir/share/index.php", '<?php echo 1;');
        file_put_contents("$this->dir/share/api.php", '<?php echo 2;');
        file_put_contents("$this->dir/root/local.php", '<?php echo 3;');
    }

    protected function tearDown(): void
    {
        PeerProcess::removeDir($this->dir);
    }

    public function testLinksOutOfTheRootAreNamedUnderTheDefault(): void
    {
        symlink("$this->dir/share/index.php", "$this->dir/root/index.php");
        symlink("$this->dir/share/api.php", "$this->dir/root/api.php");
        symlink('local.php', "$this->dir/root/inside.php"); // stays in the root: always followed

        $warning = SymlinkPolicy::Inside->startupWarning("$this->dir/root");

        self::assertNotNull($warning);
        self::assertStringStartsWith("2 of the document root's entries are links out of it that --symlinks=inside refuses (api.php, index.php)", $warning);
        self::assertStringContainsString('--symlinks=owner', $warning);
    }

    public function testNothingIsSaidWhenThePolicyServesThemOrNoneLeadsOut(): void
    {
        symlink("$this->dir/share/index.php", "$this->dir/root/index.php");
        self::assertNull(SymlinkPolicy::Follow->startupWarning("$this->dir/root"));
        self::assertNull(SymlinkPolicy::OwnerMatch->startupWarning("$this->dir/root"), 'link and target have one owner');

        unlink("$this->dir/root/index.php");
        symlink('local.php', "$this->dir/root/inside.php");
        self::assertNull(SymlinkPolicy::Inside->startupWarning("$this->dir/root"));
        self::assertNull(SymlinkPolicy::Inside->startupWarning("$this->dir/missing"), 'a root that is not there is reported elsewhere');
    }

    public function testManyAreCountedAndFiveNamed(): void
    {
        for ($i = 1; $i <= 7; $i++) {
            symlink("$this->dir/share/index.php", "$this->dir/root/page$i.php");
        }

        $warning = (string) SymlinkPolicy::Inside->startupWarning("$this->dir/root");

        self::assertStringStartsWith('7 of the document root', $warning);
        self::assertStringContainsString('(page1.php, page2.php, page3.php, page4.php, page5.php and 2 more)', $warning);
    }
}
