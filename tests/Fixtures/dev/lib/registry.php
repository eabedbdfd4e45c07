<?php
final class DevFixtureRegistry
{
    public static int $visits = 0;
}
