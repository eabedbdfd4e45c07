<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * Parity with nginx + php-fpm: every request of ParityCases goes to the reference (nginx in front of php-fpm,
 * both started here, serving tests/Fixtures/site/public) and to the server under test (startSubject()), and
 * the answers must be equal once the AcceptedDifferences are normalised away. A failure prints each differing
 * value by path, both sides, and the servers' logs.
 */
abstract class ParityTestCase extends TestCase
{
    public const SITE = __DIR__ . '/../../Fixtures/site';

    private static ?ParityServer $reference = null;

    private static ?ParityServer $subject = null;

    /** Starts the server under test on $site (a directory whose public/ is the document root). */
    abstract protected static function startSubject(string $site): ParityServer;

    protected static function startReference(string $site): ParityServer
    {
        return ParityServer::nginxFpm("$site/public");
    }

    public static function setUpBeforeClass(): void
    {
        $site = (string) realpath(self::SITE);
        self::$reference = static::startReference($site);
        try {
            self::$subject = static::startSubject($site);
        } catch (\Throwable $e) {
            self::$reference->stop();
            self::$reference = null;
            throw $e;
        }
    }

    public static function tearDownAfterClass(): void
    {
        self::$subject?->stop();
        self::$reference?->stop();
        self::$subject = self::$reference = null;
    }

    /** @return array<string, array{list<ParityRequest>}> */
    public static function cases(): array
    {
        return array_map(static fn(array $requests): array => [$requests], ParityCases::all());
    }

    /** @param list<ParityRequest> $requests */
    #[DataProvider('cases')]
    public function testTheServerAnswersLikeNginxAndPhpFpm(array $requests): void
    {
        $reference = self::$reference;
        $subject = self::$subject;
        self::assertNotNull($reference);
        self::assertNotNull($subject);
        $referenceSession = $subjectSession = null;
        foreach ($requests as $i => $request) {
            $a = ParityClient::send($reference, $request, $referenceSession);
            $b = ParityClient::send($subject, $request, $subjectSession);
            $referenceSession = ParityClient::issuedSession($a) ?? $referenceSession;
            $subjectSession = ParityClient::issuedSession($b) ?? $subjectSession;
            $differences = ParityDiff::differences(
                AcceptedDifferences::normalise($a, $reference),
                AcceptedDifferences::normalise($b, $subject),
                $reference->name,
                $subject->name,
            );
            if ($differences !== []) {
                self::fail(self::report($i, $requests, $differences, $a, $b, $reference, $subject));
            }
            self::assertSame(200 <= $a['status'] && $a['status'] < 400, true, "the reference itself failed {$request->describe()}:\n{$a['body']}");
        }
    }

    /**
     * @param list<ParityRequest> $requests
     * @param list<string> $differences
     * @param array{status: int, headers: array<string, list<string>>, body: string, sent_at: float, received_at: float} $a
     * @param array{status: int, headers: array<string, list<string>>, body: string, sent_at: float, received_at: float} $b
     */
    private static function report(int $i, array $requests, array $differences, array $a, array $b, ParityServer $reference, ParityServer $subject): string
    {
        $shown = \array_slice($differences, 0, 60);
        if (\count($differences) > \count($shown)) {
            $shown[] = '  … and ' . (\count($differences) - \count($shown)) . ' more';
        }
        $text = \sprintf(
            "request %d of %d (%s) answered differently; accepted differences (normalised away): %s\n%s\n",
            $i + 1,
            \count($requests),
            $requests[$i]->describe(),
            implode(', ', array_keys(AcceptedDifferences::LIST)),
            implode("\n", $shown),
        );
        if ($a['status'] !== $b['status']) {
            $text .= "\n{$subject->name} answered {$b['status']} with:\n" . substr($b['body'], 0, 1500) . "\n";
        }
        if ($a['status'] >= 400) {
            $text .= "\nthe reference itself answered {$a['status']} (its nginx and php-fpm workers run as www-data when the"
                . " tests run as root: the fixture site must be world-readable):\n" . $reference->diagnostics() . "\n";
        }
        return $text . "\n" . $subject->diagnostics();
    }
}
